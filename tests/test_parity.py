"""The parity harness (parity.py) fails what it should."""
import math

import pytest

import torchlike as tl
from parity import both


def test_the_harness_fails_what_it_should():
    """A row where torch raises but no error is declared fails (it would test nothing), and so
    does an error row where torch returns; rtol=0 / atol=0 mean exact; NaN equals NaN only."""
    with pytest.raises(AssertionError, match="torch raised .* in a value row"):
        both(lambda T: T.ones(2) @ T.ones(3))
    with pytest.raises(AssertionError, match="torch returned .* in an error row"):
        both(lambda T: T.ones(2), raises=True)
    both(lambda T: T.ones(2) @ T.ones(3), match="inconsistent tensor size", raises=True)
    nudged = lambda T: T.tensor([1.0]) + (1e-7 if T is tl else 0.0)   # noqa: E731
    both(nudged)
    with pytest.raises(AssertionError, match="values differ"):
        both(nudged, rtol=0, atol=0)
    with pytest.raises(AssertionError, match="torch 1.0 vs torchlike 1.0000000001"):
        both(lambda T: 1.0 + (1e-10 if T is tl else 0.0), rtol=0, atol=0)
    both(lambda T: [math.nan, complex(math.nan, 1.0), T.tensor(math.nan).item()])
    with pytest.raises(AssertionError, match="torch nan vs torchlike 1.0"):
        both(lambda T: 1.0 if T is tl else math.nan)
