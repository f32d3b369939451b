"""`openai` is optional (extra `taskmint[calibrate]`): only the endpoint client imports it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# every module of taskmint.calibrate but the three that reach the endpoints
WITHOUT_OPENAI = (
    "bands",
    "joint",
    "models",
    "policy",
    "posterior",
    "predictor",
    "reference",
    "results",
    "sequential",
    "tools",
)


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_the_calibrate_package_does_not_import_openai():
    done = _run(
        f"""
        import sys
        import taskmint.calibrate
        for name in {WITHOUT_OPENAI!r}:
            __import__(f"taskmint.calibrate.{{name}}")
        assert "openai" not in sys.modules, "imported openai"
        taskmint.calibrate.calibrate_models  # the names that need it load on first use
        assert "openai" in sys.modules
        """
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("use", ["make_client", "calibrate_models"])
def test_without_openai_model_calibration_says_what_to_install(use):
    done = _run(
        f"""
        import sys
        sys.modules["openai"] = None  # `import openai` raises ImportError
        from taskmint.calibrate import CalibrationConfig, ModelConfig
        from taskmint.calibrate import calibrate_models, make_client, run_attempt
        from taskmint.config import Limits
        from taskmint.errors import TaskmintError

        model = ModelConfig(name="m", base_url="http://127.0.0.1:9/v1", model="m")
        try:
            if {use!r} == "make_client":
                make_client(model, "")
            else:
                calibrate_models(
                    [], config=CalibrationConfig(models=(model,)), seed_for=None,
                    env_for=None, sandbox=None, limits=Limits(), environ={{}},
                )
        except TaskmintError as exc:
            print(exc)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "model calibration needs the openai client: pip install 'taskmint[calibrate]'"
    )
