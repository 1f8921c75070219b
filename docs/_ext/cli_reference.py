"""The ``creator-help`` directive: the ``--help`` text of a ``creator`` subcommand.

The text comes from the command's own parser (``creator_plugin.cli``) when the
documentation is built, so the reference cannot drift from the command::

    ```{creator-help} fit
    ```

renders ``creator fit --help`` as a literal block; ``casestudy llm`` names a
nested subcommand.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

#: Terminal width the help text is wrapped at (it fits the theme's text column).
COLUMNS = 80


def _parser() -> argparse.ArgumentParser:
    from creator_plugin.cli import _build_parser

    return _build_parser()


def _children(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def subcommands(parser: argparse.ArgumentParser | None = None,
                prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every subcommand of ``creator`` as a tuple of words, nested ones included."""
    parser = _parser() if parser is None else parser
    for name, child in _children(parser).items():
        words = (*prefix, name)
        yield words
        yield from subcommands(child, words)


def help_text(words: tuple[str, ...] | list[str]) -> str:
    """``creator <words> --help`` as the command prints it at COLUMNS columns."""
    parser = _parser()
    for word in words:
        children = _children(parser)
        if word not in children:
            raise ValueError(f"creator has no subcommand {' '.join(words)!r} "
                             f"(known here: {', '.join(children) or 'none'})")
        parser = children[word]
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(COLUMNS)  # argparse wraps at the terminal's width
    try:
        return parser.format_help()
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


class CreatorHelp(SphinxDirective):
    """``creator <subcommand> --help``, generated from the parser at build time."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        words = self.arguments[0].split()
        try:
            text = help_text(words)
        except ValueError as exc:
            raise self.error(str(exc)) from None
        import creator_plugin.benchmark.cli as bench_cli
        import creator_plugin.casestudy.llm as llm_cli
        import creator_plugin.cli as cli

        for module in (cli, bench_cli, llm_cli):  # rebuild the page when a parser changes
            self.env.note_dependency(module.__file__)
        command = " ".join(["$ creator", *words, "--help"])
        block = nodes.literal_block("", f"{command}\n{text}")
        block["language"] = "none"
        block["classes"].append("creator-help")
        return [block]


def setup(app) -> dict:
    app.add_directive("creator-help", CreatorHelp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
