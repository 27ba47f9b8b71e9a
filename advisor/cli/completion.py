"""`advisor completion bash|zsh|fish`: a completion script read off the parser itself.

Generated from the same argparse tree `advisor --help` prints, so a new flag completes
without touching this file: subcommands at each level, each command's options, the
choices of an option that has them, the catalog's GPU ids after --current, --target,
--gpu and `catalog show` (and id@N once an @ is typed), the model presets after --model,
the vendors after --vendor, and file names after any other option that takes a value.
The ids and presets are the ones known when the script is made (a pulled catalog's
too): make it again after a pull. zsh loads the bash script through its bashcompinit,
as its documentation suggests for bash completions.

    advisor completion bash > ~/.local/share/bash-completion/completions/advisor
    advisor completion zsh  > ~/.zfunc/_advisor
    advisor completion fish > ~/.config/fish/completions/advisor.fish

zsh finds it with `fpath+=~/.zfunc; autoload -Uz compinit && compinit` in ~/.zshrc.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from advisor.cli import COMMANDS

SHELLS = ("bash", "zsh", "fish")
VALUES = {"--current": "counted", "--target": "targets", "--gpu": "gpus", "--model": "models",
          "--vendor": "vendors"}
"""The options whose values are catalog or preset names, and the list each completes from:
`counted` and `targets` are GPU ids that take `@N` (a target may also be `all`)."""
POSITIONAL = {("catalog", "show"): "gpus"}
"""Positional arguments that are catalog ids, by command."""
COUNTS = (1, 2, 4, 8, 16, 32, 64, 72, 128, 256, 512, 1024)
"""The counts offered after `id@`: powers of two, and 72 (an NVL72 rack)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("completion", help=COMMANDS["completion"],
                       description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    p.add_argument("shell", choices=SHELLS)
    p.set_defaults(handler=cmd_completion)


@dataclass
class Node:
    """One level of the command tree: its subcommands, options and what their values are."""

    path: tuple[str, ...]
    help: str = ""
    children: dict[str, str] = field(default_factory=dict)  # name -> help
    options: dict[str, str] = field(default_factory=dict)  # flag -> help
    choices: dict[str, list[str]] = field(default_factory=dict)  # flag -> its values
    values: dict[str, str] = field(default_factory=dict)  # flag -> the list of VALUES it takes
    takes: list[str] = field(default_factory=list)  # flags that take a value of any kind
    positional_choices: list[str] = field(default_factory=list)


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = (), help: str = "",
         lists: Mapping[str, Sequence[str]] | None = None) -> list[Node]:
    """The tree below `parser`; `lists` (VALUES' lists by name) fills `catalog show`'s ids."""
    node = Node(path, help)
    out = [node]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, child in action.choices.items():
                node.children[name] = helps.get(name, "")
                out += walk(child, (*path, name), helps.get(name, ""), lists)
        elif action.option_strings:
            for flag in action.option_strings:
                if flag.startswith("--") or len(action.option_strings) == 1:
                    node.options[flag] = action.help or ""
                    if action.choices is not None:
                        node.choices[flag] = [str(c) for c in action.choices]
                    elif flag in VALUES:
                        node.values[flag] = VALUES[flag]
                    if action.nargs != 0:
                        node.takes.append(flag)
        elif action.choices is not None:
            node.positional_choices += [str(c) for c in action.choices]
        elif path in POSITIONAL and lists is not None:
            node.positional_choices += lists[POSITIONAL[path]]
    return out


def value_lists() -> dict[str, list[str]]:
    """What each kind of value in VALUES completes to, from the catalog and the presets."""
    from advisor.core import PRESETS
    from advisor.io.catalog_store import effective_catalog

    catalog = effective_catalog()
    ids = [g.id for g in catalog.gpus]
    return {"gpus": ids, "counted": ids, "targets": [*ids, "all"], "models": list(PRESETS),
            "vendors": sorted({g.vendor for g in catalog.gpus})}


def _sq(text: str) -> str:
    """Single-quoted for bash and fish."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'" if "'" in text \
        else f"'{text}'"


def bash(nodes: list[Node], lists: Mapping[str, Sequence[str]]) -> str:
    paths = " ".join("/".join(n.path) for n in nodes if n.path)
    words, values = [], []
    for n in nodes:
        key = "/".join(n.path)
        offered = " ".join([*n.children, *n.options, *n.positional_choices])
        takes = f" {' '.join(n.takes)} " if n.takes else ""
        words.append(f"        {_sq(key)}) words={_sq(offered)} takes={_sq(takes)} ;;")
        values += [f"        {_sq(key + ':' + flag)}) words={_sq(' '.join(c))} ;;"
                   for flag, c in n.choices.items()]
        values += [f"        {_sq(key + ':' + flag)}) _advisor_values {kind} ;;"
                   for flag, kind in n.values.items()]
    kinds = [f"        {kind}) words={_sq(' '.join(names))} ;;" for kind, names in lists.items()]
    return "\n".join([
        "# advisor completion for bash (and zsh through bashcompinit)",
        "_advisor_values() {",
        "    # the names a value of this kind may be; id@N once an @ is typed",
        '    if [[ ( $1 == counted || $1 == targets ) && $cur == *@* ]]; then',
        "        local n",
        f"        for n in {' '.join(map(str, COUNTS))}; do words+=\"${{cur%%@*}}@$n \"; done",
        "        return",
        "    fi",
        '    case "$1" in',
        *kinds,
        "    esac",
        "}",
        "_advisor() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
        '    local key="" w words="" takes=""',
        f"    local paths={_sq(paths)}",
        '    for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do',
        '        case " $paths " in *" ${key:+$key/}$w "*) key="${key:+$key/}$w" ;; esac',
        "    done",
        '    case "$key:$prev" in',
        *values,
        '        *) case "$key" in',
        *words,
        "        esac",
        '        case "$takes" in *" $prev "*) words="" ;; esac ;;  # a value: file names',
        "    esac",
        '    COMPREPLY=($(compgen -W "$words" -- "$cur"))',
        "}",
        "complete -o default -F _advisor advisor",
        "",
    ])


def zsh(nodes: list[Node], lists: Mapping[str, Sequence[str]]) -> str:
    return "\n".join(["#compdef advisor",
                      "autoload -U +X bashcompinit && bashcompinit",
                      bash(nodes, lists)])


def fish(nodes: list[Node], lists: Mapping[str, Sequence[str]]) -> str:
    lines = ["# advisor completion for fish",
             "function __advisor_values",
             "    # the names a value of this kind may be; id@N once an @ is typed",
             "    set -l cur (commandline -ct)",
             "    if contains -- $argv[1] counted targets; and string match -q -- '*@*' $cur",
             "        set -l gpu (string split -m 1 @ -- $cur)[1]",
             f"        for n in {' '.join(map(str, COUNTS))}",
             "            echo $gpu@$n",
             "        end",
             "        return",
             "    end",
             "    switch $argv[1]"]
    for kind, names in lists.items():
        lines += [f"        case {kind}", f"            printf '%s\\n' {' '.join(map(_sq, names))}"]
    lines += ["    end", "end"]
    for n in nodes:
        if not n.path:
            cond = "__fish_use_subcommand"
        else:
            cond = "; and ".join(f"__fish_seen_subcommand_from {p}" for p in n.path)
            if n.children:
                cond += f"; and not __fish_seen_subcommand_from {' '.join(n.children)}"
        for name, text in n.children.items():
            lines.append(f"complete -c advisor -n {_sq(cond)} -a {name} -d {_sq(text)}")
        for flag, text in n.options.items():
            spec = f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}"
            if flag in n.choices:
                spec += f" -x -a {_sq(' '.join(n.choices[flag]))}"
            elif flag in n.values:  # a model may be a config.json too: files stay offered
                files = "-r" if n.values[flag] == "models" else "-x"
                spec += f" {files} -a {_sq('(__advisor_values ' + n.values[flag] + ')')}"
            elif flag in n.takes:
                spec += " -r"
            lines.append(f"complete -c advisor -n {_sq(cond)} {spec} -d {_sq(text)}")
        if n.positional_choices:
            lines.append(f"complete -c advisor -n {_sq(cond)} -x -a "
                         f"{_sq(' '.join(n.positional_choices))}")
    return "\n".join(lines) + "\n"


def cmd_completion(args: argparse.Namespace) -> int:
    from advisor.cli import build_parser

    lists = value_lists()
    nodes = walk(build_parser(full=True), lists=lists)
    print({"bash": bash, "zsh": zsh, "fish": fish}[args.shell](nodes, lists), end="")
    return 0
