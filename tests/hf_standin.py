"""A local stand-in for the Hugging Face Hub's file endpoint: `/{org}/{name}/resolve/{revision}/{file}`.

It serves the files of a few repos (each a dict of file name -> JSON-able content) the way
huggingface_hub's `hf_hub_download` expects: HEAD and GET answer with an ETag, X-Repo-Commit and
Content-Length (no redirects). An unknown repo answers 404 with `X-Error-Code: RepoNotFound`, a
missing file 404 with `EntryNotFound`, a gated repo 401 with `GatedRepo`, and a slow repo waits
`delay` seconds (or until the stand-in stops) before answering. Every request is recorded so tests
can count network calls. Also usable from the command line: `python tests/hf_standin.py --port 9100`
serves CONFIGS, for trying `HF_ENDPOINT=http://127.0.0.1:9100 gpuplan ...` by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# config.json of a few public repos, as huggingface.co serves them (fields that do not shape the model left out)
CONFIGS: dict[str, dict[str, Any]] = {
    "meta-llama/Meta-Llama-3-8B": {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "hidden_act": "silu",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "max_position_embeddings": 8192,
        "model_type": "llama",
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "rms_norm_eps": 1e-05,
        "rope_theta": 500000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "vocab_size": 128256,
    },
    "Qwen/Qwen3-30B-A3B": {
        "architectures": ["Qwen3MoeForCausalLM"],
        "attention_bias": False,
        "decoder_sparse_step": 1,
        "head_dim": 128,
        "hidden_size": 2048,
        "intermediate_size": 6144,
        "max_position_embeddings": 40960,
        "mlp_only_layers": [],
        "model_type": "qwen3_moe",
        "moe_intermediate_size": 768,
        "num_attention_heads": 32,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "num_hidden_layers": 48,
        "num_key_value_heads": 4,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "vocab_size": 151936,
    },
    "deepseek-ai/DeepSeek-V3": {
        "architectures": ["DeepseekV3ForCausalLM"],
        "first_k_dense_replace": 3,
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "kv_lora_rank": 512,
        "max_position_embeddings": 163840,
        "model_type": "deepseek_v3",
        "moe_intermediate_size": 2048,
        "n_group": 8,
        "n_routed_experts": 256,
        "n_shared_experts": 1,
        "num_attention_heads": 128,
        "num_experts_per_tok": 8,
        "num_hidden_layers": 61,
        "num_key_value_heads": 128,
        "num_nextn_predict_layers": 1,
        "q_lora_rank": 1536,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8"},
        "tie_word_embeddings": False,
        "topk_group": 4,
        "torch_dtype": "bfloat16",
        "v_head_dim": 128,
        "vocab_size": 129280,
    },
    "google/gemma-3-27b-it": {
        "architectures": ["Gemma3ForConditionalGeneration"],
        "model_type": "gemma3",
        "text_config": {
            "head_dim": 128,
            "hidden_size": 5376,
            "intermediate_size": 21504,
            "model_type": "gemma3_text",
            "num_attention_heads": 32,
            "num_hidden_layers": 62,
            "num_key_value_heads": 16,
            "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
            "sliding_window": 1024,
        },
        "torch_dtype": "bfloat16",
        "vision_config": {"hidden_size": 1152, "model_type": "siglip_vision_model", "num_hidden_layers": 27},
    },
    "openai-community/gpt2": {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "n_ctx": 1024,
        "n_embd": 768,
        "n_head": 12,
        "n_layer": 12,
        "n_positions": 1024,
        "vocab_size": 50257,
    },
}


def commit_of(repo: str) -> str:
    """A stable 40-hex commit id per repo, as X-Repo-Commit carries."""
    return hashlib.sha1(repo.encode()).hexdigest()


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def record(self, call: dict[str, Any]) -> None:
        with self.lock:
            self.calls.append(call)

    def count(self, repo: str | None = None) -> int:
        """Requests so far (for one repo, if named)."""
        with self.lock:
            return sum(1 for c in self.calls if repo is None or c["repo"] == repo)

    def clear(self) -> None:
        with self.lock:
            self.calls.clear()


class Handler(BaseHTTPRequestHandler):
    standin: HubStandIn
    protocol_version = "HTTP/1.0"  # one request per connection: no pooled socket outlives its stand-in

    def log_message(self, *args: Any) -> None:
        """Quiet: the recorder keeps every call."""

    def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
        self._serve(body=False)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._serve(body=True)

    def _serve(self, body: bool) -> None:
        repo, filename = _parse(urllib.parse.urlsplit(self.path).path)
        delay = self.standin.slow.get(repo or "", 0.0)
        if delay:
            self.standin.stopping.wait(delay)
        status, headers, payload = self.standin.answer(repo, filename)
        call = {"method": self.command, "path": self.path, "repo": repo, "status": status}
        self.standin.recorder.record({**call, "authorization": self.headers.get("authorization")})
        try:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if body:
                self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a slow repo): nobody to answer
            return


def _parse(path: str) -> tuple[str | None, str | None]:
    """('org/name', 'config.json') from /org/name/resolve/<revision>/config.json; (None, None) otherwise."""
    parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
    if len(parts) >= 5 and parts[2] == "resolve":
        return f"{parts[0]}/{parts[1]}", "/".join(parts[4:])
    return None, None


class HubStandIn:
    """Start with `with HubStandIn({"org/name": config}) as hub:`; `hub.endpoint` goes into HF_ENDPOINT."""

    def __init__(
        self,
        configs: dict[str, dict[str, Any]] | None = None,
        gated: set[str] | frozenset[str] = frozenset(),
        slow: dict[str, float] | None = None,
        port: int = 0,
    ):
        self.repos = {repo: {"config.json": config} for repo, config in (configs or CONFIGS).items()}
        self.gated = set(gated)
        self.slow = dict(slow or {})
        self.recorder = Recorder()
        self.stopping = threading.Event()
        handler = type("BoundHandler", (Handler,), {"standin": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.running = False

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(self, repo: str | None, filename: str | None) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body for one file request, as the Hub answers it."""
        if repo in self.gated:
            message = f"Access to model {repo} is restricted. You must have access to it and be authenticated."
            return _error(401, "GatedRepo", message)
        if repo not in self.repos:
            return _error(404, "RepoNotFound", "Repository not found")
        commit = commit_of(repo)
        if filename not in self.repos[repo]:
            status, headers, payload = _error(404, "EntryNotFound", f"{filename} does not exist on main")
            return status, {**headers, "X-Repo-Commit": commit}, payload
        payload = json.dumps(self.repos[repo][filename], indent=2).encode()
        etag = hashlib.sha1(b"blob %d\0" % len(payload) + payload).hexdigest()  # git's blob id, as the Hub uses
        headers = {"Content-Type": "application/json", "ETag": f'"{etag}"', "X-Repo-Commit": commit}
        return 200, headers, payload

    def __enter__(self) -> HubStandIn:
        self.thread.start()
        self.running = True
        return self

    def stop(self) -> None:
        """Stop answering (the port then refuses connections); slow requests still waiting return at once."""
        if self.running:
            self.running = False
            self.stopping.set()
            self.server.shutdown()
            self.server.server_close()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _error(status: int, code: str, message: str) -> tuple[int, dict[str, str], bytes]:
    headers = {"Content-Type": "application/json", "X-Error-Code": code, "X-Error-Message": message}
    return status, headers, json.dumps({"error": message}).encode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=9100)
    port = ap.parse_args().port
    with HubStandIn(port=port) as hub:
        print(f"Hugging Face Hub stand-in at {hub.endpoint} serving {', '.join(CONFIGS)}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            hub.thread.join()


if __name__ == "__main__":
    main()
