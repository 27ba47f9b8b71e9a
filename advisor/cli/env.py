"""`advisor env`: what to paste into a bug report, as `huggingface-cli env` and `vllm
collect-env` do. Versions, this box's GPUs and driver, torch's build, the catalog and the
folders advisor uses; sanitised: the home folder reads `~`, and no host name, user name,
GPU serial or secret is printed. torch is never imported (its build is read from its
version file), so this works on a box where torch is broken.
"""

from __future__ import annotations

import argparse

from advisor.cli import COMMANDS

PACKAGES = ("rich", "textual", "pydantic", "numpy", "httpx", "tomlkit", "platformdirs",
            "packaging", "nvidia-ml-py", "torch")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("env", help=COMMANDS["env"],
                       description="Versions, GPUs and driver, torch's build, the catalog and "
                                   "advisor's folders, sanitised, to paste into a bug report.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_env)


def _home(text: str) -> str:
    from pathlib import Path

    home = str(Path.home())
    return text.replace(home, "~") if home not in ("", "/") else text


def _version(dist: str) -> str:
    import importlib.metadata as md

    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return "not installed"


def collect() -> dict[str, object]:
    """Every fact `advisor env` prints, as plain data."""
    import os
    import platform
    import sys

    from advisor import DISTRIBUTION, __version__
    from advisor.io import detect
    from advisor.io.catalog_store import effective_catalog, pulled_sources, shipped_catalog_version
    from advisor.io.paths import data_dir, probes_dir, pulled_dir

    catalog = effective_catalog()
    torch = detect._torch_version_file()
    nvml = detect.nvml_gpus()
    gpus = detect.detect_gpus(catalog)
    probes = sorted(p.stem for p in probes_dir().glob("*.json")) if probes_dir().is_dir() else []
    return {
        "advisor": f"{__version__} ({DISTRIBUTION})",
        "python": f"{platform.python_version()} ({platform.python_implementation()}) "
                  f"{_home(sys.executable)}",
        "platform": platform.platform(terse=True),
        "packages": {d: _version(d) for d in PACKAGES},
        "torch build": _torch_build(torch),
        "gpu detection": "NVML (nvidia-ml-py)" if nvml is not None else
                         "vendor tools (nvidia-smi, amd-smi, rocm-smi)",
        "gpus": [{"name": g.name, "vendor": g.vendor, "memory_mib": g.memory_mib,
                  "driver": g.driver, "capability": g.capability or g.gcn_arch,
                  "catalog_id": g.catalog_id} for g in gpus],
        "catalog": {"shipped": shipped_catalog_version(), "gpus": len(catalog.gpus),
                    "pulled": [f"{s.kind} {s.url} (fetched {s.fetched_at:%Y-%m-%d})"
                               for s in pulled_sources()]},
        "folders": {"data": _home(str(data_dir())), "pulled": _home(str(pulled_dir())),
                    "probes": _home(str(probes_dir()))},
        "probe records": probes,
        "environment": {k: _home(os.environ[k]) for k in ENVIRONMENT if k in os.environ},
    }


ENVIRONMENT = ("ADVISOR_HOME", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "NO_COLOR",
               "COLUMNS")
"""The variables that change what advisor does or sees."""


def _torch_build(info: dict[str, object]) -> str:
    if not info:
        return "torch not installed"
    build = (f"CUDA {info['cuda']}" if info.get("cuda") else f"HIP {info['hip']}"
             if info.get("hip") else "CPU only")
    return f"{info.get('__version__', 'unknown version')}, {build}"


def _lines(data: dict[str, object], indent: str = "") -> list[str]:
    out = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.append(f"{indent}- {key}:")
            out += _lines(value, indent + "  ")
        elif isinstance(value, list | dict):
            if not value:
                out.append(f"{indent}- {key}: none")
                continue
            out.append(f"{indent}- {key}:")
            for item in value:
                text = ", ".join(f"{k} {v}" for k, v in item.items() if v is not None) \
                    if isinstance(item, dict) else str(item)
                out.append(f"{indent}  - {text}")
        else:
            out.append(f"{indent}- {key}: {value if value is not None else 'unknown'}")
    return out


def cmd_env(args: argparse.Namespace) -> int:
    import json

    from advisor.cli.schemas import ENV
    from advisor.core import clean_block

    data = collect()
    if args.json:  # the keys the text says in words, in snake_case
        print(json.dumps(ENV.document({k.replace(" ", "_"): v for k, v in data.items()}),
                         indent=2))
    else:
        print(clean_block("\n".join(_lines(data))))
    return 0
