import pytest

from gpuplan.knowledge import catalog


@pytest.fixture(scope="session")
def cat():
    return catalog()
