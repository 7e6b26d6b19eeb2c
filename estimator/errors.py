"""Errors the estimator reports about a request: a list of Notes naming the offending values."""

from __future__ import annotations

from gpuplan.estimator.schema import Note


class RequestError(ValueError):
    """The request cannot be estimated as written (exit code 2 on the command line)."""

    def __init__(self, notes: list[Note]):
        self.notes = notes
        super().__init__("; ".join(f"{n.code} {n.params}" for n in notes))


def fail(code: str, **params: object) -> RequestError:
    return RequestError([Note(code=code, params=params)])
