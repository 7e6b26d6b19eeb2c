import pytest

from knowledge import catalog


@pytest.fixture(scope="session")
def cat():
    return catalog()
