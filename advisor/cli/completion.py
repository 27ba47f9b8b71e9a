"""`advisor completion bash|zsh|fish`: a completion script read off the parser itself.

Generated from the same argparse tree `advisor --help` prints, so a new flag completes
without touching this file: subcommands at each level, each command's options, the
choices of an option that has them, and file names everywhere else. zsh loads the bash
script through its bashcompinit, as its documentation suggests for bash completions.

    advisor completion bash > ~/.local/share/bash-completion/completions/advisor
    advisor completion zsh  > ~/.zfunc/_advisor    # fpath+=~/.zfunc; autoload -Uz compinit
    advisor completion fish > ~/.config/fish/completions/advisor.fish
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from advisor.cli import COMMANDS

SHELLS = ("bash", "zsh", "fish")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("completion", help=COMMANDS["completion"],
                       description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("shell", choices=SHELLS)
    p.set_defaults(handler=cmd_completion)


@dataclass
class Node:
    """One level of the command tree: its subcommands, options and options' choices."""

    path: tuple[str, ...]
    help: str = ""
    children: dict[str, str] = field(default_factory=dict)  # name -> help
    options: dict[str, str] = field(default_factory=dict)  # flag -> help
    choices: dict[str, list[str]] = field(default_factory=dict)  # flag -> its values
    positional_choices: list[str] = field(default_factory=list)


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = (), help: str = ""
         ) -> list[Node]:
    node = Node(path, help)
    out = [node]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, child in action.choices.items():
                node.children[name] = helps.get(name, "")
                out += walk(child, (*path, name), helps.get(name, ""))
        elif action.option_strings:
            for flag in action.option_strings:
                if flag.startswith("--") or len(action.option_strings) == 1:
                    node.options[flag] = action.help or ""
                    if action.choices is not None:
                        node.choices[flag] = [str(c) for c in action.choices]
        elif action.choices is not None:
            node.positional_choices += [str(c) for c in action.choices]
    return out


def _sq(text: str) -> str:
    """Single-quoted for bash and fish."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'" if "'" in text \
        else f"'{text}'"


def bash(nodes: list[Node]) -> str:
    paths = " ".join("/".join(n.path) for n in nodes if n.path)
    words, values = [], []
    for n in nodes:
        key = "/".join(n.path)
        offered = " ".join([*n.children, *n.options, *n.positional_choices])
        words.append(f"        {_sq(key)}) words={_sq(offered)} ;;")
        values += [f"        {_sq(key + ':' + flag)}) words={_sq(' '.join(c))} ;;"
                   for flag, c in n.choices.items()]
    return "\n".join([
        "# advisor completion for bash (and zsh through bashcompinit)",
        "_advisor() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
        '    local key="" w words=""',
        f"    local paths={_sq(paths)}",
        '    for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do',
        '        case " $paths " in *" ${key:+$key/}$w "*) key="${key:+$key/}$w" ;; esac',
        "    done",
        '    case "$key:$prev" in',
        *values,
        '        *) case "$key" in',
        *words,
        "        esac ;;",
        "    esac",
        '    COMPREPLY=($(compgen -W "$words" -- "$cur"))',
        "}",
        "complete -o default -F _advisor advisor",
        "",
    ])


def zsh(nodes: list[Node]) -> str:
    return "\n".join(["#compdef advisor",
                      "autoload -U +X bashcompinit && bashcompinit",
                      bash(nodes)])


def fish(nodes: list[Node]) -> str:
    lines = ["# advisor completion for fish"]
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
            values = f" -x -a {_sq(' '.join(n.choices[flag]))}" if flag in n.choices else ""
            lines.append(f"complete -c advisor -n {_sq(cond)} {spec}{values} -d {_sq(text)}")
        if n.positional_choices:
            lines.append(f"complete -c advisor -n {_sq(cond)} -x -a "
                         f"{_sq(' '.join(n.positional_choices))}")
    return "\n".join(lines) + "\n"


def cmd_completion(args: argparse.Namespace) -> int:
    from advisor.cli import build_parser

    nodes = walk(build_parser(full=True))
    print({"bash": bash, "zsh": zsh, "fish": fish}[args.shell](nodes), end="")
    return 0
