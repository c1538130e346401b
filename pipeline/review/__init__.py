"""`jobdedup review`: a local web page over a `dedup` output folder.

Browse groups (largest first, filtered and paginated on the server), read a group or a pair side by
side with `jobdedup explain`'s view, label as you read (answers appended to a labels CSV in the
format `jobdedup label` writes), watch the precision of the accepted pairs estimated live from a
uniform sample, and see which sources share vacancies.

Modules: `command` (parser and run), `app` (FastAPI routes and the static page), `data` (the dedup
output, indexed), `labels` (the answers file, locked), `estimates` (sampling modes and the
estimate). The page's script and style are in `static/`, served from the package.
"""

from __future__ import annotations

from jobdedup.pipeline.review.data import GroupFilter, ReviewData
from jobdedup.pipeline.review.labels import LabelStore

__all__ = ["GroupFilter", "LabelStore", "ReviewData"]
