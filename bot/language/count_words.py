"""What the GPU-count rules (knowledge/rules/<lang>/gpu_count.yaml) refer to by name: the converter
that tells a count of cards per machine from a total ("2台8卡" is 16 GPUs, "2机16卡" 16), those of the
counts written beside a card's name (card_count.yaml: "3*8*A100", "2台 H100*8", "1.5x A100" none), and
the named predicates a rule's `when` lists ("two gpu servers" count servers, "a gpu" is no count). The
reading engine (engine.py) takes them into its CONVERTERS and CONDITIONS."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gpuplan.bot.language.values import count_value

# GPUs one server usually holds (NVIDIA HGX/DGX boards carry 8)
USUAL_GPUS_PER_SERVER = 8

# one server word after a count in digits: the server's GPUs ("an 8 GPU server"; "two gpu server(s)" are servers)
_ONE_SERVER_AFTER = re.compile(r"\s+(?:node|server|machine|box)(?![a-z])")
# a GPU count's word followed by a server word without a hyphen: servers counted ("two gpu servers")
_GPU_SERVERS = re.compile(r"(?<!-gpu)(?<!-gpus)\s+(?:servers?|machines?|nodes?|boxes)\b")


def _nodes_of_cards(match: re.Match, rule: Any) -> tuple[tuple[int, int], None]:
    """(nodes, GPUs) of "{nodes:NUM} {unit} {gpus:NUM} cards" ("2台8卡", "two nodes of 8 GPUs", "4
    nodes with totally 32 gpus"): "2机16卡" is 16 GPUs over 2 machines; "2台8卡", "two nodes of 8",
    "2 servers x 8 GPUs" are per node; "2 nodes with 16 GPUs", "2 nodes, 16 GPUs" are totals, more
    than a usual server holds; "each" makes any of them per node. No machines, no reading."""
    nodes, count = count_value(match["nodes"]), count_value(match["gpus"])
    if nodes < 1:
        raise ValueError(f"no machines: {match.group(0)!r}")  # "0台8卡"
    said = match.group(0)
    joined = " with " in f" {said} " or "," in said or "，" in said
    split_evenly = count % nodes == 0  # "3机4卡" is no total: 4 cards do not split over 3 machines
    total_by_with = joined and count > USUAL_GPUS_PER_SERVER and split_evenly
    said_total = match["total"] is not None or (match["unit"].startswith("机") and split_evenly) or total_by_with
    total = count if said_total and "each" not in said else nodes * count
    return (int(nodes), int(total)), None


def _servers_times_cards(match: re.Match, rule: Any) -> tuple[tuple[int, int], None]:
    """(nodes, GPUs) of "3*8*A100", "12x8卡H20", "two 8 A100 servers": servers times their cards."""
    nodes, per_node = count_value(match["nodes"]), count_value(match["gpus"])
    return (int(nodes), int(nodes * per_node)), None


def _machines_of_cards(match: re.Match, rule: Any) -> tuple[tuple[int, int], None]:
    """(nodes, GPUs) of "two nodes of 8 H100" (per node) and "2机16张A800" (机: a total)."""
    nodes, count = count_value(match["nodes"]), count_value(match["gpus"])
    return (int(nodes), int(count if match["unit"].startswith("机") else nodes * count)), None


def _servers_of_cards(match: re.Match, rule: Any) -> tuple[tuple[int | None, int | None], None]:
    """(nodes, GPUs) of "2 H100*8 machines", "2台 H100*8": servers, each of the count after the
    card; (None, None), no count at all, when the servers are no whole number."""
    servers = count_value(match["nodes"])
    if not servers or servers != int(servers):
        return (None, None), None
    return (int(servers), int(servers) * int(match["gpus"])), None


def _count_if_whole(match: re.Match, rule: Any) -> tuple[int | None, None]:
    """The count in the group named after the rule's field; None (a count that reads nothing,
    and stops any other rule reading one there) when it is zero or no whole number ("1.5x A100")."""
    count = count_value(match[rule.field])
    return (int(count) if count and count == int(count) else None), None


def _thousands(match: re.Match, rule: Any) -> tuple[int, None]:
    """ "on 16k H100": thousands of cards."""
    return int(float(match[rule.field]) * 1000), None


def _not_gpu_servers(text: str, match: re.Match) -> bool:
    """A count of GPUs unless a server word follows without a hyphen ("two gpu servers" count
    servers); digits before one server word are one server's GPUs ("an 8 GPU server")."""
    servers = _GPU_SERVERS.match(text, match.end())
    return not servers or (match["gpus"].isdigit() and _ONE_SERVER_AFTER.match(text, match.end()) is not None)


def _no_article(text: str, match: re.Match) -> bool:
    """A count that is no article: "a gpu server", "an 8-GPU node" name one thing, they count none."""
    return all(match.groupdict().get(name) not in ("a", "an") for name in ("gpus", "nodes", "servers", "instances"))


CONVERTERS: dict[str, Callable[[re.Match, Any], tuple[Any, None]]] = {
    "nodes_of_cards": _nodes_of_cards,
    "servers_times_cards": _servers_times_cards,
    "machines_of_cards": _machines_of_cards,
    "servers_of_cards": _servers_of_cards,
    "count_if_whole": _count_if_whole,
    "thousands": _thousands,
}
CONDITIONS: dict[str, Callable[[str, re.Match], bool]] = {
    "not_gpu_servers": _not_gpu_servers,
    "no_article": _no_article,
}
