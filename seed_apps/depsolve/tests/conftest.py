import pytest

from depsolve import Registry


@pytest.fixture
def web_registry():
    """A small registry with extras, markers, yanked releases and pre-releases."""
    return Registry.from_dict(
        {
            "packages": {
                "web": {
                    "1.0.0": ["http ^1.0", "json"],
                    "1.1.0": {
                        "dependencies": ["http ^2.0", "json", 'winapi ; sys_platform == "win32"'],
                        "extras": {"tls": ["crypto >=3"], "fast": ['speedups ; extra == "fast"']},
                    },
                    "1.2.0-rc.1": ["http ^2.0", "json"],
                },
                "http": {"1.0.0": [], "1.4.0": [], "2.0.0": ["json >=2"], "2.1.0": {"dependencies": [], "yanked": True}},
                "json": {"1.0.0": [], "2.0.0": [], "2.5.0": []},
                "crypto": {"2.0.0": [], "3.0.0": [], "3.1.0": []},
                "speedups": {"0.1.0": []},
                "winapi": {"1.0.0": []},
            }
        }
    )
