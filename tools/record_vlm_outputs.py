"""Record a two-stage parser's real outputs as a precomputed system of a documents suite.

    python tools/record_vlm_outputs.py cases/papers --base-url http://127.0.0.1:8765/v1 \\
        --model-name smollm2 --system pymupdf+vlm --as pymupdf+smollm2

Runs the built-in two-stage system (`--system`) with the model served at `--base-url` on every
case's document.pdf and writes its markdown to ``<case>/outputs/<as>.md``, so a suite can show
the model's numbers offline, with no server. The outputs are what the model really produced
(nothing edited); say in the suite's suite.toml which model, quantisation and server made them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pytest_doceval.models.config import ModelConfig
from pytest_doceval.models.runtime import ModelRuntime
from pytest_doceval.systems import SystemEnv, build_registry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model-name", default="smollm2")
    parser.add_argument("--model-id", default="smollm2")
    parser.add_argument("--system", default="pymupdf+vlm")
    parser.add_argument("--as", dest="name", required=True)
    parser.add_argument("--window-chars", type=int, default=2000)
    parser.add_argument("--max-tokens", type=int, default=1024)
    args = parser.parse_args()
    config = ModelConfig.from_table(
        args.model_name,
        {"base_url": args.base_url, "model": args.model_id, "timeout": 600},
        source="tools/record_vlm_outputs.py",
    )
    runtime = ModelRuntime(
        {args.model_name: config},
        workers=1,
        source="tools/record_vlm_outputs.py",
    )
    settings = {args.system: {"window_chars": args.window_chars, "max_tokens": args.max_tokens}}
    env = SystemEnv(build_registry(), settings, models=runtime, defaults={"vlm": args.model_name})
    system = env.system(args.system)
    try:
        for pdf in sorted(args.suite.glob("*/document.pdf")):
            text = system.parse(pdf)
            out = pdf.parent / "outputs" / f"{args.name}.md"
            out.parent.mkdir(exist_ok=True)
            out.write_text(text + "\n", encoding="utf-8")
            print(f"{out}: {len(text)} characters")
    finally:
        runtime.close()


if __name__ == "__main__":
    main()
