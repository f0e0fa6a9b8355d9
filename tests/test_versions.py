"""code_version: import closures of core entries plus bundled resources."""

import pytest

from factory import versions


@pytest.fixture
def fake_root(tmp_path, monkeypatch):
    """A package root with a small `factory` package: a -> b (module level), b -> c (inside a function)."""
    pkg = tmp_path / "factory"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from factory.sub import b\nimport json\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from factory.c import g\n    return g\n")
    (pkg / "c.py").write_text("def g():\n    return 1\n")
    (pkg / "unrelated.py").write_text("X = 1\n")
    (tmp_path / "prompts" / "role").mkdir(parents=True)
    (tmp_path / "prompts" / "role" / "system.j2").write_text("hello")
    monkeypatch.setattr(versions, "package_root", lambda: tmp_path)
    versions.import_closure.cache_clear()
    yield tmp_path
    versions.import_closure.cache_clear()


def test_closure_follows_submodule_and_function_level_imports(fake_root):
    names = {str(p.relative_to(fake_root)) for p in versions.import_closure("factory.a")}
    assert names == {
        "factory/__init__.py",
        "factory/a.py",
        "factory/sub/__init__.py",
        "factory/sub/b.py",
        "factory/c.py",
    }


def test_version_changes_with_a_transitive_dependency_only(fake_root):
    v1 = versions.code_version("factory.a", resources=["prompts/role"])
    (fake_root / "factory" / "unrelated.py").write_text("X = 2\n")
    assert versions.code_version("factory.a", resources=["prompts/role"]) == v1
    (fake_root / "factory" / "c.py").write_text("def g():\n    return 2\n")
    v2 = versions.code_version("factory.a", resources=["prompts/role"])
    assert v2 != v1
    (fake_root / "prompts" / "role" / "system.j2").write_text("hello again")
    assert versions.code_version("factory.a", resources=["prompts/role"]) != v2


def test_missing_resource_and_unknown_module_are_errors(fake_root):
    with pytest.raises(FileNotFoundError, match="prompts/nope"):
        versions.code_version("factory.a", resources=["prompts/nope"])
    with pytest.raises(ModuleNotFoundError, match="factory.nope"):
        versions.code_version("factory.nope")


def test_real_judging_closure_includes_the_contamination_screen():
    """The hand-kept list missed splits/contamination.py, which the judging cascade imports."""
    from factory.filters import cascade

    files = {p.as_posix() for p in versions.import_closure(cascade.__name__)}
    assert any(f.endswith("factory/splits/contamination.py") for f in files)
    assert versions.code_version(cascade) == versions.code_version("factory.filters.cascade")
