"""What one estimate works with: the request, its model's shape, the method, the GPU type the user
fixed, and the assumptions and warnings the estimate collects on the way; plus the choices that
training and serving plans make alike (candidate GPU types, fabric, stock)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.estimator import compute, hardware, memo, search
from gpuplan.estimator.architecture import Arch
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.memory import Overheads
from gpuplan.estimator.schema import Note, Request
from gpuplan.knowledge import GPU, Catalog, catalog

SECONDS_PER_DAY = 86400.0


@dataclass
class Context:
    cat: Catalog
    req: Request
    arch: Arch
    model_id: str | None
    gpu: GPU | None  # the type the user fixed; None lets the search choose
    method: str
    assumptions: list[Note]
    warnings: list[Note]

    # unvalidated: the code is a literal and params a fresh dict, so validation (which copies the
    # dict) would build the same Note, at a few microseconds each
    def assume(self, code: str, **params: object) -> None:
        self.assumptions.append(constructed_note(code, params))

    def warn(self, code: str, **params: object) -> None:
        self.warnings.append(constructed_note(code, params))

    def number(self, section: str, key: str | None = None) -> float:
        return self.cat.defaults.number(section, key)


def constructed_note(code: str, params: dict) -> Note:
    """Note.model_construct(code=code, params=params): the instance it builds, set as it sets one
    (pydantic's BaseModel.model_construct), without its loop over the fields' aliases and defaults,
    half its cost (a dozen Notes an estimate)."""
    note = Note.__new__(Note)
    object.__setattr__(note, "__dict__", {"code": code, "params": params})
    object.__setattr__(note, "__pydantic_fields_set__", {"code", "params"})
    object.__setattr__(note, "__pydantic_extra__", None)
    object.__setattr__(note, "__pydantic_private__", None)
    return note


def overheads(cat: Catalog) -> Overheads:
    d = cat.defaults
    return Overheads(
        cuda_context_gib=d.number("overhead", "cuda_context_gib"),
        comm_buffers_gib=d.number("overhead", "comm_buffers_gib"),
        fragmentation=d.number("overhead", "fragmentation"),
    )


def candidate_gpus(ctx: Context, precision: str | None) -> list[GPU]:
    """The fixed GPU type, else every type in stock (in the region, when one is given) that no
    other type dominates for this job."""
    if ctx.gpu:
        return [ctx.gpu]
    region, wanted = ctx.req.region, ctx.req.gpu_memory_gib
    if ctx.cat is not catalog():  # a catalog made for this request (the user's own servers)
        in_class, types = _candidates(ctx.cat, region, wanted, precision)
    else:  # the process's own: the same few regions, memory classes and precisions come back
        key = (id(ctx.cat), region, wanted, precision)
        in_class, types = _CANDIDATES.get(key, (ctx.cat,), lambda: _candidates(ctx.cat, region, wanted, precision))
    if wanted:
        ctx.assume("gpu_memory_class", gib=wanted, gpus=list(in_class))
    return list(types)


# candidate_gpus on the process's catalog by region, memory class and precision
_CANDIDATES = memo.ShapeCache(64)


def _candidates(
    cat: Catalog, region: str | None, wanted: float | None, precision: str | None
) -> tuple[list[str], list[GPU]]:
    """(the names of the types in the memory class asked for, the undominated types in stock)."""
    types = [g for g in cat.gpus.values() if cat.stock(g.id, region)[0] > 0]
    if not types:
        raise RequestError([Note(code="no_stock", params={"region": region or ""})])
    if wanted:  # "a 48GB card": the types of that memory class (marketed GB vs reported GiB, ECC)
        types = [g for g in types if hardware.in_class(g, wanted)]
        if not types:
            raise RequestError([Note(code="no_gpu_with_memory", params={"gib": wanted})])
    speed = {g.id: compute.sustained_matmul_flops(g, precision or "bf16-mixed", cat) for g in types}
    return [g.name for g in types], search.drop_dominated(cat, types, region, speed)


def fabric_for(ctx: Context, gpu: GPU) -> str:
    """The inter-node fabric: the user's choice, else what servers of this GPU type usually carry."""
    return ctx.req.fabric or gpu.node_fabric


def stock_warning(ctx: Context, gpu: GPU, gpus: int, region: str | None) -> None:
    """More GPUs than the provider holds of a type (a type it does not stock at all was given
    unlimited stock and said to be the user's own, in estimate._estimate)."""
    stock, where = ctx.cat.stock(gpu.id, region)
    if gpus > stock:
        ctx.warn("over_stock", gpus=gpus, gpu=gpu.name, stock=stock, region=where or "")


def no_layout(req: Request, batch: int) -> Note:
    """No parallel layout meets what was fixed: the note lists the fixed values, so one can go."""
    names = ("gpus", "nodes", "tp", "pp", "vpp", "ep", "etp", "cp", "zero", "micro_batch")
    fixed = {name: getattr(req, name) for name in names if getattr(req, name) is not None}
    return Note(code="no_layout", params={"fixed": fixed, "batch": batch})
