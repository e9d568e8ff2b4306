"""Before a purge deletes anything: the files it must write or scrub open, or the forget is refused with one
line saying what to do. A damaged auxiliary file must never leave rows deleted with no receipt and a journal
that cannot finish.

Each probe returns None when its file is fine (or absent: it is made on first use), else the advice. The same
probes serve ``memdeck doctor``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from memdeck.core.errors import MemdeckError

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

Probe = Callable[["Engine"], "str | None"]


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:159] + "…"


def trace_log(store: Engine) -> str | None:
    """The DuckDB trace log opens (a forget scrubs it and copies it into a fresh file)."""
    from memdeck.core.storage import logdb

    problem = logdb.damage(store)
    if problem is None:
        return None
    return (
        f"the trace log {logdb.log_path(store)} cannot be opened ({_short(Exception(problem))}): a forget "
        "could not scrub it. It holds only recall traces: move it aside (or delete it), then forget again"
    )


def receipt_keys(store: Engine) -> str | None:
    """The receipt signing key and salt load (a forget signs its receipt with them)."""
    from memdeck.core.receipts import ReceiptBook

    book = ReceiptBook(Path(store.root))
    if not (book.key_path.exists() or book.salt_path.exists()):
        return None
    try:
        book.public_key()
    except MemdeckError as exc:
        return (
            f"{_short(exc)}: a forget could not sign its receipt. Restore {book.keys_dir} from a backup; or move "
            f"the damaged file aside and a new one is made on the next forget (earlier receipts then verify "
            f"only with the old public key, which each of them carries)"
        )
    return None


def journal_key(store: Engine) -> str | None:
    """The key that encrypts a purge's journal secret is 32 bytes, or absent."""
    from memdeck.core.forget.purge import JOURNAL_KEY_FILE

    path = Path(store.layout.keys) / JOURNAL_KEY_FILE
    try:
        size = len(path.read_bytes())
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"the journal key {path} cannot be read ({exc.strerror}): a forget could not journal its texts"
    if size != 32:
        return (
            f"the journal key {path} is damaged ({size} bytes, expected 32): a forget could not journal its "
            f"texts. If `memdeck doctor` shows no interrupted purge, move it aside; a new one is made"
        )
    return None


def vault_damage(store: Engine, principal: str) -> str | None:
    """Why a principal's redaction vault does not decrypt, or None when it does (or there is none)."""
    from memdeck.core.privacy.vault import Vault

    try:
        Vault(store.layout.vault).tokens(principal)
    except MemdeckError as exc:
        return _short(exc)
    return None


def vault_of(store: Engine, principal: str) -> str | None:
    """A principal's redaction vault decrypts (a forget prunes the forgotten values from it)."""
    from memdeck.core.privacy.vault import Vault

    damage = vault_damage(store, principal)
    if damage is not None:
        vault = Vault(store.layout.vault)
        return (
            f"the redaction vault of {principal!r} is damaged ({damage}): a forget could not prune the "
            f"forgotten values from it. Forgetting everything of {principal!r} (`memdeck forget --principal`) "
            f"destroys the vault whatever its state; otherwise restore {vault.root} from a backup"
        )
    return None


def redact_without_vault(store: Engine, text: str, principal: str) -> str:
    """``text`` redacted as the store redacts, into a vault that is thrown away at once: its values are
    replaced by tokens that resolve nowhere (for a reason signed while the principal's vault is damaged)."""
    import tempfile

    from memdeck.core.privacy.redact import Redactor
    from memdeck.core.privacy.vault import Vault

    with tempfile.TemporaryDirectory(prefix="memdeck-redact-") as tmp:
        return Redactor.from_settings(store.settings.redaction, Vault(tmp)).redact(text, principal).text


def table_versions(store: Engine) -> str | None:
    """Every version manifest of every table reads (a purge rewrites the tables and removes their older
    versions). Listing the versions parses each manifest: a damaged one fails here, in milliseconds even for
    hundreds of versions, where checking each version out would cost a second."""
    from memdeck.core.storage.tables import dataset, table_names

    for name in table_names(store):
        try:
            dataset(store, name).versions()
        except Exception as exc:  # noqa: BLE001 - Lance reports a damaged file as OSError, RuntimeError, ValueError...
            return (
                f"the table {name} has a damaged file ({_short(exc)}): a forget could not rewrite it. "
                f"`memdeck doctor` checks every table; restore the store's lance folder from a backup"
            )
    return None


STORE_PROBES: tuple[Probe, ...] = (table_versions, trace_log, receipt_keys, journal_key)


def check(store: Engine, principal: str, *, whole: bool) -> None:
    """Refuse a forget, before anything is deleted, when a file it must use is damaged (one line of advice)."""
    problems = [p for p in (probe(store) for probe in STORE_PROBES) if p]
    if not whole:  # a whole-principal forget destroys the vault without reading it
        vault = vault_of(store, principal)
        if vault:
            problems.append(vault)
    if problems:
        raise MemdeckError(
            f"nothing was forgotten: {problems[0]}"
            + (
                f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''}: `memdeck doctor`)"
                if len(problems) > 1
                else ""
            )
        )
