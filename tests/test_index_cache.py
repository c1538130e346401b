"""`pipeline.index.cache`: the service's in-memory keys answer as the SQLite store does."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobdedup.pipeline.index import Index
from jobdedup.pipeline.index.cache import KeyCache, open_cached


def test_cached_block_sightings_keep_values_equal_to_removed_ids(tmp_path, default_model, test_ads):
    path = tmp_path / "ads.jdx"
    with Index.open(path) as index:
        index.add(test_ads.iloc[:20], default_model)
        gone = index.store.find_ads([test_ads["ad_id"].iloc[0]])["id"].to_numpy()
        index.remove([test_ads["ad_id"].iloc[0]])
        with index.store.write(5):  # a sighting whose value happens to equal the removed ad's id
            index.store.insert_block_sightings(np.asarray([12345], dtype=np.int64), gone)
        with index.store.read():
            stored = index.store.block_sightings(np.asarray([12345]))
    assert stored["value"].tolist() == gone.tolist()  # values are not ads: removals do not apply
    with open_cached(path, KeyCache(), read_only=True) as cached, cached.store.read():
        pd.testing.assert_frame_equal(
            cached.store.block_sightings(np.asarray([12345])), stored, check_dtype=False
        )
