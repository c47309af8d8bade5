"""The Zotero API key at rest: a Fernet token under a key from the settings, never the key."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken

from digest.errors import DigestError

#: What a refused connect says when the server has no secret key to encrypt with.
NO_SECRET = (
    "Zotero is not available here: the bot has no secret key to store your API key encrypted. "
    "The operator sets DIGESTBOT_SECRET_KEY (e.g. the output of "
    '`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`).'
)


class SecretBox:
    """Seals and opens short secrets with Fernet (AES-128-CBC + HMAC-SHA256, timestamped)."""

    def __init__(self, secret: str) -> None:
        if not secret:
            raise DigestError(NO_SECRET)
        self._fernet = Fernet(_fernet_key(secret))

    def seal(self, text: str) -> str:
        return self._fernet.encrypt(text.encode("utf-8")).decode("ascii")

    def open(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode("utf-8")
        except (InvalidToken, ValueError):
            raise DigestError(
                "Your stored Zotero key can no longer be read (the bot's secret key changed); "
                "`/papers me zotero connect` again."
            ) from None

    def __repr__(self) -> str:
        return "SecretBox(…)"


def _fernet_key(secret: str) -> bytes:
    """A Fernet key as given, else one derived from the passphrase (SHA-256)."""
    try:
        if len(base64.urlsafe_b64decode(secret.encode("ascii"))) == 32:
            return secret.encode("ascii")
    except (ValueError, UnicodeEncodeError):
        pass
    return base64.urlsafe_b64encode(hashlib.sha256(secret.encode("utf-8")).digest())
