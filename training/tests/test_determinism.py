import hashlib
import json
import re

from training import train
from training.tests.conftest import REPO_ROOT


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_training_twice_gives_the_same_file(real_csv, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert train.main(["--csv", str(real_csv), "--out", str(a), "--quiet"]) == 0
    assert train.main(["--csv", str(real_csv), "--out", str(b), "--quiet"]) == 0
    assert sha(a) == sha(b)
    # and it is the committed, reviewed file
    reviewed = (REPO_ROOT / "src/services/houses/model/reviewed-model.ts").read_text()
    assert sha(a) == re.search(r"sha256: '([0-9a-f]{64})'", reviewed).group(1)
    assert a.read_bytes() == (REPO_ROOT / "models/kc-hgb-drift-2015-02.json").read_bytes()
    doc = json.loads(a.read_text())
    test = doc["card"]["test"]
    assert test["mape_pct"] <= 12.0
    assert test["as_of_sale_month"]["mape_pct"] <= 11.8
    assert 0.78 <= doc["range"]["measured_test_coverage"] <= 0.82
    assert len(doc["trees"]) <= 950 and max(len(t["is_leaf"]) for t in doc["trees"]) <= 2 * 15 - 1
