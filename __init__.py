"""gpuplan: GPU sizing for training, fine-tuning and serving large language models.

The repository root is the `gpuplan` package (pyproject maps it): `gpuplan.estimator` is the
public API, `gpuplan.bot` the surfaces (CLI, Slack), `gpuplan.knowledge` the data."""

__version__ = "0.1.0"
