"""The CREATOR paper's language-model case study, on a generated corpus.

Stories in three styles (news, fairy tale, plain: the environments) carry a
background, a condition and an ending whose grades follow BG -> CD -> ED and
BG -> ED; the packaged all-MiniLM-L6-v2 encodes them; CREATOR, the paper's
exact algorithm and LiNGCReL recover three latents and a DAG, which is scored
after matching the latents to the parts. Needs the ``[llm]`` extra.

By default a small run (one corpus of 40 stories per style, layer 6, one
sketch draw; about 35 s of CPU time). ``python examples/05_llm_case_study.py
--out DIR`` with no ``--small`` runs the full study behind the table in
the documentation's LLM results page; any ``creator casestudy llm`` option is accepted.
"""

import sys
import tempfile
from pathlib import Path

from creator_plugin.casestudy.llm import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        with tempfile.TemporaryDirectory() as out:
            sys.exit(main(["--small", "--out", str(Path(out) / "llm")]))
    sys.exit(main(args))
