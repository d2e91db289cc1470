"""Settings: memsift/config.py."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from memsift.config import Config, default_home, load_config, unknown_settings
from memsift.errors import ConfigurationError


def write_toml(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8")


def test_defaults_with_nothing_configured(tmp_path):
    config = load_config({"MEMSIFT_HOME": str(tmp_path)})

    assert config == Config(home=tmp_path)
    assert config.store == "embedded"
    assert config.dataset == "memsift"
    assert config.decider_deadline == 2.0 and config.store_deadline == 12.0
    assert isinstance(config.max_items, int) and isinstance(config.answers_threshold, float)


def test_every_test_runs_with_a_private_home(memsift_home):
    assert load_config().home == memsift_home
    assert memsift_home.name.startswith("memsift-home")


def test_the_default_home_is_a_memsift_data_folder_and_is_not_created(tmp_path):
    home = default_home({})

    assert home.name == "memsift"
    assert default_home({"MEMSIFT_HOME": str(tmp_path / "x")}) == tmp_path / "x"
    assert default_home({"MEMSIFT_HOME": ""}) == home  # empty means unset


def test_the_config_file_sets_values(tmp_path):
    write_toml(tmp_path, 'store = "cognee"\ncognee_url = "http://cognee.lan:8000"\n'
                         "decider_deadline = 0.5\nmax_items = 2\nanswers_threshold = 0.7\n")

    config = load_config({"MEMSIFT_HOME": str(tmp_path)})

    assert (config.store, config.cognee_url, config.decider_deadline, config.max_items,
            config.answers_threshold) == ("cognee", "http://cognee.lan:8000", 0.5, 2, 0.7)
    assert config.store_deadline == 12.0  # what the file does not name keeps its default


def test_environment_variables_override_the_file(tmp_path):
    write_toml(tmp_path, 'dataset = "from-file"\ndecider_deadline = 0.5\nmax_items = 2\n')

    config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_DATASET": "from-env",
                          "MEMSIFT_DECIDER_DEADLINE": "1.25", "MEMSIFT_MAX_ITEMS": "4"})

    assert (config.dataset, config.decider_deadline, config.max_items) == ("from-env", 1.25, 4)
    assert isinstance(config.max_items, int) and isinstance(config.decider_deadline, float)


def test_an_environment_variable_set_empty_clears_an_optional_value(tmp_path):
    write_toml(tmp_path, 'cognee_api_key = "from-file"\n')

    config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_COGNEE_API_KEY": ""})

    assert config.cognee_api_key is None


def test_load_config_reads_the_process_environment(monkeypatch, memsift_home):
    monkeypatch.setenv("MEMSIFT_SEARCH_LIMIT", "7")

    assert load_config().search_limit == 7


@pytest.mark.parametrize(("variable", "value"), [
    ("MEMSIFT_DECIDER_DEADLINE", "soon"),
    ("MEMSIFT_STORE_DEADLINE", ""),
    ("MEMSIFT_MAX_ITEMS", "2.5"),
    ("MEMSIFT_ANSWERS_THRESHOLD", "high"),
    ("MEMSIFT_STORE", "redis"),
])
def test_a_bad_environment_value_is_a_configuration_error(tmp_path, variable, value):
    with pytest.raises(ConfigurationError):
        load_config({"MEMSIFT_HOME": str(tmp_path), variable: value})


@pytest.mark.parametrize("text", [
    'store = "redis"\n',
    'max_items = "many"\n',
    'decider_deadline = "fast"\n',
    'store = "embedded\n',             # not TOML
    '[embedded]\nanswers_threshold = 2\n',
])
def test_a_bad_config_file_is_a_configuration_error(tmp_path, text):
    write_toml(tmp_path, text)

    with pytest.raises(ConfigurationError):
        load_config({"MEMSIFT_HOME": str(tmp_path)})


def test_a_bad_value_names_the_file_or_the_variable_it_comes_from(tmp_path):
    write_toml(tmp_path, 'store = "redis"\n')
    with pytest.raises(ConfigurationError, match=rf"^{tmp_path / 'config.toml'}: store must be 'embedded' or"):
        load_config({"MEMSIFT_HOME": str(tmp_path)})
    with pytest.raises(ConfigurationError, match=r"^MEMSIFT_MAX_ITEMS: setting max_items='many': "):
        load_config({"MEMSIFT_HOME": str(tmp_path / "elsewhere"), "MEMSIFT_MAX_ITEMS": "many"})


def test_a_name_that_is_no_setting_is_ignored_and_named_with_the_closest_one(tmp_path):
    """A typo costs its own setting only: memory works with the others, and the typo is told."""
    write_toml(tmp_path, 'jugde = "semantic"\nmax_items = 2\nhome = "/elsewhere"\nzzz = 1\n'
                         '[embedded]\nsearch_treshold = 0.3\nkeep_threshold = 0.7\n')
    environ = {"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_ANSWER_THRESHOLD": "0.9"}

    config = load_config(environ)

    assert (config.judge, config.max_items, config.home, config.keep_threshold) == ("lexical", 2, tmp_path, 0.7)
    file = tmp_path / "config.toml"
    assert unknown_settings(environ) == [
        "MEMSIFT_ANSWER_THRESHOLD is not a memsift setting (did you mean MEMSIFT_ANSWERS_THRESHOLD?), ignored",
        f"{file}: jugde is not a memsift setting (did you mean judge?), ignored",
        f"{file}: home is chosen by MEMSIFT_HOME only (this file is in the home), ignored",
        f"{file}: zzz is not a memsift setting, ignored",
        f"{file}: [embedded] search_treshold is not a threshold (did you mean search_threshold?), ignored"]
    assert unknown_settings({"MEMSIFT_HOME": str(tmp_path / "none")}) == []


def test_a_config_file_that_is_not_utf8_is_a_configuration_error(tmp_path):
    (tmp_path / "config.toml").write_bytes(b'dataset = "\xff\xfe"\n')

    with pytest.raises(ConfigurationError):
        load_config({"MEMSIFT_HOME": str(tmp_path)})


def test_a_boolean_for_a_number_is_a_configuration_error(tmp_path):
    write_toml(tmp_path, "decider_deadline = true\n")

    with pytest.raises(ConfigurationError):
        load_config({"MEMSIFT_HOME": str(tmp_path)})


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf"])
def test_a_deadline_that_is_not_positive_is_a_configuration_error(tmp_path, value):
    with pytest.raises(ConfigurationError):
        load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_DECIDER_DEADLINE": value})


@pytest.mark.parametrize(("variable", "value"), [("MEMSIFT_ANSWERS_THRESHOLD", "1.5"),
                                                 ("MEMSIFT_KEEP_THRESHOLD", "-0.1"),
                                                 ("MEMSIFT_ASKED_THRESHOLD", "2"),
                                                 ("MEMSIFT_SAID_SHARE", "0"),
                                                 ("MEMSIFT_SAID_SHARE", "1.2"),
                                                 ("MEMSIFT_MAX_ITEMS", "0")])
def test_a_threshold_outside_zero_one_or_no_room_for_items_is_a_configuration_error(tmp_path, variable, value):
    with pytest.raises(ConfigurationError):
        load_config({"MEMSIFT_HOME": str(tmp_path), variable: value})


def test_the_config_is_a_frozen_value(tmp_path):
    config = load_config({"MEMSIFT_HOME": str(tmp_path)})

    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        config.store = "cognee"  # type: ignore[misc]


# -- project folders -------------------------------------------------------------

def test_project_dir_is_stable_for_one_root(tmp_path):
    config = load_config({"MEMSIFT_HOME": str(tmp_path / "home")})
    root = tmp_path / "src" / "shop"
    root.mkdir(parents=True)

    first = config.project_dir(root)

    assert first == config.project_dir(str(root))
    assert first == config.project_dir(root / ".." / "shop")
    assert first == load_config({"MEMSIFT_HOME": str(tmp_path / "home")}).project_dir(root)
    assert first.parent == tmp_path / "home" / "projects"
    assert first.name.startswith("shop-") and len(first.name) == len("shop-") + 8


def test_project_dir_is_distinct_per_root_even_with_the_same_name(tmp_path):
    config = load_config({"MEMSIFT_HOME": str(tmp_path / "home")})
    roots = [tmp_path / "a" / "shop", tmp_path / "b" / "shop", tmp_path / "a" / "blog"]

    folders = {config.project_dir(root) for root in roots}

    assert len(folders) == 3


def test_project_dir_of_a_relative_root_is_that_of_its_absolute_path(tmp_path, monkeypatch):
    config = load_config({"MEMSIFT_HOME": str(tmp_path / "home")})
    (tmp_path / "shop").mkdir()
    monkeypatch.chdir(tmp_path / "shop")

    assert config.project_dir(".") == config.project_dir(tmp_path / "shop")


def test_project_dir_of_the_filesystem_root_is_named(tmp_path):
    config = load_config({"MEMSIFT_HOME": str(tmp_path)})

    assert config.project_dir("/").name.startswith("root-")


# -- the documentation -----------------------------------------------------------

DOCS = Path(__file__).resolve().parents[1] / "docs"


def documented_defaults(page: str) -> dict[str, str]:
    """``setting -> default`` from the rows of a page's tables that name one setting."""
    rows = {}
    for line in (DOCS / page).read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].count("`") == 2 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells[1]
    return rows


@pytest.mark.parametrize("page", ["configuration.md", "deciders.md"])
def test_the_docs_give_each_number_setting_its_default(page):
    rows = documented_defaults(page)
    numbers = [f for f in attrs.fields(Config) if isinstance(f.default, int | float) and f.name in rows]

    assert numbers, f"no setting found in docs/{page}"
    for field in numbers:
        assert float(rows[field.name].removesuffix(" s")) == field.default, field.name


def test_the_configuration_page_names_every_setting():
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")

    assert [f.name for f in attrs.fields(Config)[1:] if f"`{f.name}`" not in page] == []
