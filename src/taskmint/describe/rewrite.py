"""Optional LLM rewriting of template statements, through an OpenAI-compatible endpoint.

The model is one of the calibration config's `[[model]]` entries (the same TOML, the same
`api_key_env` rule), named by the pipeline config's `describe_model`. The model only ever sees
the template statement, which already passed the leak check, and is asked to reword it; its
answer is leak-checked again by the describe stage. Any failure (no model, a refused or timed-out
request, an empty or oversized answer, an answer that drops a required fact) gives `None`, and
the caller keeps the template text: rewriting can make a statement read better, never make a
task fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:  # the model client: `pip install 'taskmint[calibrate]'`
    import openai
except ImportError:  # pragma: no cover - taskmint without the calibrate extra
    openai = None  # type: ignore[assignment]

from taskmint.calibrate.models import ModelConfig, load_calibration_config, resolve_api_key
from taskmint.errors import ManifestError
from taskmint.records import StatementStyle

__all__ = ["Rewriter", "load_rewriter"]

_SYSTEM = (
    "You edit problem statements for programming tasks. Rewrite the statement you are given so "
    "that it reads naturally in the requested style, in Markdown. Keep every fact: file paths, "
    "names, signatures, test ids, error messages and rules, exactly as written. Do not add "
    "facts, do not guess the implementation, and never write code other than the signatures "
    "already shown. Answer with the rewritten statement only."
)
_STYLE = {
    "spec": "a precise specification for an engineer",
    "issue": "a bug report written by a user of the project",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Rewriter:
    """Rewrites statements with one model; `rewrite` returns None on any failure."""

    model: ModelConfig
    api_key: str
    timeout: float = 60.0
    max_growth: float = 3.0  # an answer longer than this times the input is refused

    @property
    def source(self) -> str:
        """What the statement's `statement_source` says when this model wrote it."""
        return f"llm:{self.model.name}"

    def rewrite(
        self, text: str, *, style: StatementStyle, required: tuple[str, ...] = ()
    ) -> str | None:
        """`text` reworded in `style`, or None (the caller keeps the template)."""
        try:
            client = openai.OpenAI(
                base_url=self.model.base_url,
                api_key=self.api_key,
                timeout=self.timeout,
                max_retries=1,
            )
            with client:
                kwargs: dict[str, Any] = {
                    self.model.max_tokens_param: self.model.max_completion_tokens
                }
                if self.model.seed is not None:
                    kwargs["seed"] = self.model.seed
                reply = client.chat.completions.create(
                    model=self.model.model,
                    messages=[
                        {"role": "system", "content": _SYSTEM},
                        {
                            "role": "user",
                            "content": f"Style: {_STYLE.get(style, style)}.\n\n{text}",
                        },
                    ],
                    temperature=0.0,
                    **kwargs,
                )
        except (openai.OpenAIError, OSError, ValueError):
            return None
        if not reply.choices:
            return None
        content = (reply.choices[0].message.content or "").strip()
        if not content or len(content) > self.max_growth * max(len(text), 200):
            return None
        if any(fact not in content for fact in required):
            return None
        return content + "\n"


def load_rewriter(
    models_path: Path | None, name: str | None, environ: Mapping[str, str]
) -> Rewriter | None:
    """The rewriter for model `name` of the calibration config at `models_path`, or None.

    None when no model is named. A named model that is missing from the config, or whose key
    variable is unset, is a configuration error (raised, with what to change).
    """
    if not name:
        return None
    if openai is None:
        raise ManifestError(
            f"describe_model = {name!r} needs the openai client: pip install 'taskmint[calibrate]'"
        )
    if models_path is None:
        raise ManifestError(
            f"describe_model = {name!r} names a model of the calibration config, but no "
            "calibration config is given; pass --models or set models in the config"
        )
    config = load_calibration_config(models_path)
    model = config.model(name)
    return Rewriter(model=model, api_key=resolve_api_key(model, environ))
