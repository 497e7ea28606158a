import hashlib
import json
import re

from training import train
from training.tests.conftest import REPO_ROOT


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_training_gives_the_committed_file_byte_for_byte(real_csv, tmp_path):
    # One training, compared with the file that another run (another day, another machine)
    # committed: determinism across runs, which a second training in this process would only repeat.
    a = tmp_path / "a.json"
    assert train.main(["--csv", str(real_csv), "--out", str(a), "--quiet"]) == 0
    reviewed = (REPO_ROOT / "src/services/houses/model/reviewed-model.ts").read_text()
    assert sha(a) == re.search(r"sha256: '([0-9a-f]{64})'", reviewed).group(1)
    assert a.read_bytes() == (REPO_ROOT / "models/kc-hgb-drift-2015-02.json").read_bytes()
    doc = json.loads(a.read_text())
    test = doc["card"]["test"]
    assert test["mape_pct"] <= 12.0
    assert test["as_of_sale_month"]["mape_pct"] <= 11.8
    assert 0.78 <= doc["range"]["measured_test_coverage"] <= 0.82
    assert len(doc["trees"]) <= 950 and max(len(t["is_leaf"]) for t in doc["trees"]) <= 2 * 15 - 1
