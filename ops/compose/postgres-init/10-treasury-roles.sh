#!/usr/bin/env bash
# compose.yaml's PostgreSQL: the API's and the signer's roles and databases, made once, on an empty volume, by the
# postgres image's entrypoint, which runs (or sources) every *.sh of /docker-entrypoint-initdb.d as the bootstrap
# superuser (POSTGRES_USER) over the server's local socket; what it runs is ./treasury-roles.psql, beside this file
# (the entrypoint ignores a .psql file). The two passwords come from the environment, never from an argument.
# Defends: a service given the superuser, and the API's role able to reach the signer's policy store (docs/deploy-hsm.md,
# "The signer's policy store: a database and a role of its own"). Does not: change a volume made before it (the
# entrypoint runs it on an empty one only: docs/operations.md says what to run on an older one).
# test/integration/build/compose-postgres-init.test.ts runs this very file, through psql, on a real server.
# (No quote inside the messages below: bash would read one as the start of a quoted word.)
: "${TREASURY_DB_PASSWORD:?set TREASURY_DB_PASSWORD, the password of the role of the API}"
: "${TREASURY_SIGNER_DB_PASSWORD:?set TREASURY_SIGNER_DB_PASSWORD, the password of the role of the signer}"
psql -v ON_ERROR_STOP=1 --no-psqlrc --quiet --username "${POSTGRES_USER:-postgres}" --dbname postgres \
  --file "$(dirname "${BASH_SOURCE[0]}")/treasury-roles.psql"
