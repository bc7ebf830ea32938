/**
 * The PKCS#11 module (a loaded Cryptoki library, e.g. SoftHSM2): load, C_Initialize, find the token by
 * label, open sessions, log in, finalize. Named after the PKCS#11 model, like graphene's Module.
 *
 * Protects against: the process crashes measured on SoftHSM + pkcs11js when concurrent async calls run
 * without CKF_OS_LOCKING_OK (SIGSEGV / `free(): invalid pointer`): C_Initialize always passes it. Also
 * against logging in to the wrong token: the slot is chosen by exact token label.
 * Known limits: one module per process; C_Finalize invalidates every session and handle of the process.
 */
import pkcs11js from 'pkcs11js';
import { SignerFault } from '../../signer-error.js';
import { ckrCode, toSignerFault } from './ckr-error-map.js';

export class Pkcs11Module {
  private finalized = false;

  private constructor(readonly p11: pkcs11js.PKCS11) {}

  /** Loads the library and initialises it with OS locking (mandatory: see the header). */
  static load(modulePath: string): Pkcs11Module {
    const p11 = new pkcs11js.PKCS11();
    try {
      p11.load(modulePath);
    } catch (err) {
      throw new SignerFault(
        'hsm_unavailable',
        `cannot load PKCS#11 module ${modulePath}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    try {
      p11.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
    } catch (err) {
      throw toSignerFault(err, 'C_Initialize');
    }
    return new Pkcs11Module(p11);
  }

  /**
   * The slot whose token carries exactly `tokenLabel` (and `tokenSerial`, when given). Two tokens with the
   * label and no serial to tell them apart are refused, naming their serials: logging in to whichever the
   * library lists first could be the wrong partition.
   */
  findTokenSlot(tokenLabel: string, tokenSerial?: string): pkcs11js.Handle {
    const labelled = this.p11
      .C_GetSlotList(true)
      .map((slot) => ({ slot, info: this.p11.C_GetTokenInfo(slot) }))
      .filter(({ info }) => info.label.trim() === tokenLabel);
    const matching =
      tokenSerial === undefined ? labelled : labelled.filter(({ info }) => info.serialNumber.trim() === tokenSerial);
    if (matching.length === 0)
      throw new SignerFault(
        'hsm_unavailable',
        tokenSerial === undefined
          ? `no token labelled "${tokenLabel}" in this PKCS#11 module`
          : `no token labelled "${tokenLabel}" with serial "${tokenSerial}" in this PKCS#11 module`,
      );
    if (matching.length > 1)
      throw new SignerFault(
        'hsm_error',
        `${matching.length} tokens labelled "${tokenLabel}" in this PKCS#11 module (serials ${matching
          .map(({ info }) => info.serialNumber.trim())
          .join(', ')}): set TREASURY_PKCS11_TOKEN_SERIAL to the one to use`,
      );
    return matching[0]!.slot;
  }

  openSession(slot: pkcs11js.Handle): pkcs11js.Handle {
    return this.p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
  }

  closeSession(session: pkcs11js.Handle): void {
    try {
      this.p11.C_CloseSession(session);
    } catch {
      /* already closed or the token is gone */
    }
  }

  /** Logs the user in (login state is per token and process: every session shares it). */
  login(session: pkcs11js.Handle, pin: string): void {
    try {
      this.p11.C_Login(session, pkcs11js.CKU_USER, pin);
    } catch (err) {
      if (ckrCode(err) !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) throw toSignerFault(err, 'C_Login');
    }
  }

  /** C_FindObjectsInit … C_FindObjectsFinal, closed on every path; returns every match. */
  findObjects(session: pkcs11js.Handle, template: pkcs11js.Template): pkcs11js.Handle[] {
    this.p11.C_FindObjectsInit(session, template);
    const handles: pkcs11js.Handle[] = [];
    try {
      for (;;) {
        const batch = this.p11.C_FindObjects(session, 256);
        if (batch.length === 0) break;
        handles.push(...batch);
      }
    } finally {
      this.p11.C_FindObjectsFinal(session);
    }
    return handles;
  }

  finalize(): void {
    if (this.finalized) return;
    this.finalized = true;
    try {
      this.p11.C_Finalize();
    } catch {
      /* not initialised */
    }
    try {
      this.p11.close();
    } catch {
      /* not loaded */
    }
  }
}
