"""`--model` beyond the presets: a Hugging Face config.json on disk, or fetched from the hub.

A model is named three ways: a preset (`llama-3.1-8b`, resolved in core), a path to a
config.json or the folder holding one, or a hub id (`org/name`), whose config.json the
`huggingface_hub` package fetches (the optional `[hub]` extra, imported only here, only
then). The decoded config goes to the pure parser, `advisor.core.model.hf_config`.
Without the package or the network, the error says how to pass the file instead.
"""

from __future__ import annotations

import errno
import re
from pathlib import Path

from advisor.core.errors import InputError
from advisor.core.formats import decode_text, parse_json
from advisor.core.model.bounds import MAX_JSON_BYTES
from advisor.core.model.hf_config import model_from_config
from advisor.core.model.transformer import ModelSpec
from advisor.io.files import read_bytes

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
"""`org/name`, as the hub spells a model repository."""
CONFIG = "config.json"


def read_model(ref: str, base: Path | None = None) -> str | ModelSpec:
    """What `--model REF` names: a local config.json or the folder holding one (relative
    to `base`, default the working directory), then a hub id; anything else is left as a
    preset name for core to resolve."""
    path = _local(ref, base)
    if path is not None:
        return read_config_file(path)
    return fetch_config(ref) if HUB_ID.match(ref) else ref


def read_config(ref: str, base: Path | None = None) -> ModelSpec:
    """What an answers file's `model = { config = "REF" }` names: a config.json (relative
    to the answers file's folder, `base`) or its folder, else a hub id."""
    path = _local(ref, base)
    if path is None and HUB_ID.match(ref):
        return fetch_config(ref)
    return read_config_file(path or (base or Path()) / ref)


def _local(ref: str, base: Path | None) -> Path | None:
    """The config.json `ref` names on disk, if any; a name no file system can hold (longer
    than its limit) names no local file, so it is read as a hub id or a preset."""
    path = (base or Path()) / Path(ref).expanduser()
    try:
        if path.is_dir() and (path / CONFIG).is_file():
            path = path / CONFIG
        found = path.is_file()
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
        found = False
    return path if found or ref.endswith(".json") else None


def read_config_file(path: Path) -> ModelSpec:
    """A config.json on disk, named after its folder (or, for `NAME.json`, its stem)."""
    file = str(path)
    data = parse_json(decode_text(read_bytes(path, MAX_JSON_BYTES), file), file)
    name = path.resolve().parent.name if path.name == CONFIG else path.stem
    return model_from_config(data, file, name or "custom")


def fetch_config(repo: str) -> ModelSpec:
    """A hub model's config.json, through the hub's own cache (so once fetched, it reads
    offline too)."""
    how = f"or download its config.json and pass --model PATH/{CONFIG}"
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise InputError("a Hugging Face model id: fetching its config needs the "
                         "huggingface_hub package (pip install 'gpu-upgrade-advisor[hub]'), "
                         f"{how}", field="--model", value=repo) from None
    try:
        local = hf_hub_download(repo, CONFIG)
    except (OSError, ValueError) as exc:  # offline, not found, gated, a malformed id
        raise InputError(f"could not fetch its {CONFIG} from the Hugging Face hub "
                         f"({type(exc).__name__}): {how}", field="--model",
                         value=repo) from None
    file = f"https://huggingface.co/{repo}/blob/main/{CONFIG}"
    data = parse_json(decode_text(read_bytes(local, MAX_JSON_BYTES), file), file)
    return model_from_config(data, file, repo)
