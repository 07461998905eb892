"""gpiozero helpers shared by the GPIO backend and the status outputs."""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator

log = logging.getLogger(__name__)


@contextlib.contextmanager
def quiet_fallbacks() -> Iterator[None]:
    """gpiozero warns once per pin library it cannot load while looking for one; that goes
    to the debug log (the error, if none loads, says what matters)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for warning in caught:
        log.debug("gpiozero: %s", warning.message)
