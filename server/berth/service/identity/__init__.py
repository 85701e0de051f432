"""Identity: who a bearer token says the caller is, and whether to believe it.

Owns the signed, expiring tokens (:mod:`~berth.service.identity.signed`: Ed25519 JSON
Web Tokens, signed by a daemon or by ``berth authd`` on a login node) and the register
of tokens the daemon issued, with their revocations (:mod:`~berth.service.identity.
issued`), kept in the database through the :class:`~berth.service.ports.TokenStore`
port so that every daemon of an HA group refuses a revoked token. The static tokens of
the configuration stay in :mod:`berth.api.auth`. ``docs/security.md`` is the trust
model. No framework; the only I/O is through the port.
"""
