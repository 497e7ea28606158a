import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA_DIR = Path(os.environ.get("SHARED_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))
CSV_PATH = SHARED_DATA_DIR / "kc_house_data.csv"


@pytest.fixture
def real_csv() -> Path:
    if not CSV_PATH.exists():
        pytest.skip(f"real CSV absent: {CSV_PATH} (set SHARED_DATA_DIR to its folder)")
    return CSV_PATH
