/**
 * The API's outbound rules classify addresses with the one classifier the gate uses too
 * (src/shared/address-class.ts); kept here so src/api/net/ reads as one room.
 */
export { classifyAddress, type AddressClass } from '../../shared/address-class.js';
