"""tools.drift on fake Colab freezes and fake PyPI answers (no network): each drift is named, and only
a combination learners can get that CI does not test fails the check."""

from pathlib import Path

import pytest
from packaging.version import Version

from tools import drift

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def course():
    return drift.read_course(ROOT)


def freeze(python="3.13", **changes):
    """Today's Colab freeze (the copy in the repo) with some lines changed (None removes one)."""
    text = (ROOT / drift.FREEZE).read_text().replace("# python: 3.13", f"# python: {python}")
    changes = {k.replace("_", "-"): v for k, v in changes.items()}
    lines = [ln for ln in text.splitlines() if ln.split("==")[0] not in changes]
    lines += [f"{k}=={v}" for k, v in changes.items() if v is not None]
    return "\n".join(lines)


def releases(course, **newer):
    """PyPI as if its newest release of each dependency were the one CI tests, plus `newer`."""
    out = {n: [v] for n, v in course.tested["newest"].items() if n in course.declared}
    for name, versions in newer.items():
        out.setdefault(name.replace("_", "-"), []).extend(map(Version, versions.split()))
    return {n: sorted(v) for n, v in out.items()}


def levels(lines):
    return [ln.split()[0] for ln in lines[1:]]


def test_todays_colab_and_pins_are_tested(course):
    lines, rc = drift.report(course, freeze(), releases(course))
    assert rc == 0 and set(levels(lines)) == {"OK"}, lines


def test_colab_moving_to_numpy_2_5_with_numba_cuda_0_30_4_is_broken(course):
    lines, rc = drift.report(course, freeze(numba_cuda="0.30.4", numpy="2.5.0"), releases(course))
    text = "\n".join(lines)
    assert rc == 1
    assert "BROKEN" in text and "np.row_stack" in text
    assert "ships numpy 2.5.0, outside the declared numpy<2.5" in text
    assert "ships numba-cuda 0.30.4; CI tests 0.22.2" in text


def test_a_cuda_13_colab_is_named_and_tested_only_while_the_cu13_set_exists(course):
    cu13 = freeze(
        cuda_bindings="13.0.3",
        nvidia_cuda_nvcc_cu12=None,
        nvidia_cuda_nvrtc_cu12=None,
        nvidia_nvjitlink_cu12=None,
        nvidia_cuda_runtime_cu12=None,
        nvidia_nvvm="13.0.88",
    )
    lines, rc = drift.report(course, cu13, releases(course))
    assert rc == 1 and "ships cuda-bindings 13.0.3; CI tests 12.9.7" in "\n".join(lines)
    assert not any("no tested set has CUDA 13" in ln for ln in lines)
    without = drift.Course(course.declared, course.python, course.tested, {"colab": 12, "newest": 12})
    lines, _ = drift.report(without, cu13, releases(course))
    assert any("compiles with CUDA 13: no tested set has CUDA 13" in ln for ln in lines)


def test_python_outside_the_declared_range(course):
    lines, rc = drift.report(course, freeze(python="3.15"), releases(course))
    assert rc == 1 and any("runs Python 3.15, outside requires-python" in ln for ln in lines)


def test_pypi_newer_in_range_is_untested_and_out_of_range_is_excluded_with_its_reason(course):
    lines, rc = drift.report(course, freeze(), releases(course, numpy="2.4.7 2.5.1", numba_cuda="0.31.0"))
    text = "\n".join(lines)
    assert rc == 1
    assert "UNTESTED  `pip install` gets numpy 2.4.7 (numpy<2.5,>=2.1); CI tests 2.4.6" in text
    assert "numpy 2.5.1 is out, kept out by" in text and "no known breakage" in text  # numba-cuda 0.31
    assert "EXCLUDED  numba-cuda 0.31.0 is out" in text
    lines, _ = drift.report(course, freeze(), releases(course, numpy="2.5.1"))
    assert any("numpy 2.5.1 is out" in ln and "np.row_stack" in ln for ln in lines)


def test_prereleases_and_yanked_releases_are_not_releases():
    answer = {
        "releases": {
            "2.4.6": [{"yanked": False}],
            "2.4.7": [{"yanked": True}],
            "2.6.0rc1": [{"yanked": False}],
            "2.5.0": [],
            "junk!": [{}],
        }
    }
    assert drift.pypi_releases(["numpy"], get=lambda url: answer) == {"numpy": [Version("2.4.6")]}


def test_offline_says_so_in_one_line_and_still_compares_colab(course):
    def offline(url):
        raise OSError("Network is unreachable")

    why = drift.pypi_releases(["numpy"], get=offline)
    assert isinstance(why, str) and "\n" not in why and "PyPI not reachable" in why
    lines, rc = drift.report(course, freeze(numpy="2.2.0"), why)
    assert lines[1] == why and rc == 1 and any("ships numpy 2.2.0; CI tests 2.1.3" in ln for ln in lines)


def test_a_cuda_extra_no_set_tests_is_untested(course):
    answers = {"numba-cuda": {"info": {"provides_extra": ["cu12", "cu13", "cu14", "test"]}, "releases": {}}}
    extras = drift.cuda_extras(answers)
    assert extras == {"numba-cuda": {12, 13, 14}}
    lines, rc = drift.report(course, freeze(), releases(course), extras)
    assert rc == 1
    assert [ln for ln in lines if "[cu" in ln] == [
        "UNTESTED  numba-cuda offers [cu14]: no tested set compiles with CUDA 14"
    ]
    lines, rc = drift.report(course, freeze(), releases(course), {"numba-cuda": {12, 13}})
    assert rc == 0
