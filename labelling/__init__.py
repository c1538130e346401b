"""The scripts that make and keep the labelled data in data/ (not installed; run each from the
repository root as `python -m labelling.<tool>`, its docstring gives the flags).

Hand-judged pairs and groups:

- `find_natural_pairs`: propose candidate natural duplicates and hard negatives in the real ads.
- `draw_pairs_to_judge`: draw a round of real-ad pairs for readers, stratified over a model's view.
- `draw_sealed`: draw the sealed test's pairs (disjoint strata, pool sizes kept for weighting).
- `draw_accepted_sample`: draw a uniform sample of the pairs a model accepts; assemble its labels.
- `draw_group_sample`: draw uniform samples of a model's final groups; assemble the readers' verdicts.
- `show_pair`: print pairs of real ads in full for a reader.
- `import_round`: bring one round of readers' judgements into data/judgements/, checked.
- `assemble_judgements`: assemble the natural pairs from the readers' judgements, with agreement.
- `natural_bundle`: bundle the natural pairs with their ads, split like the synthetic data.

Synthetic labels and word lists:

- `make_labels`: make the synthetic sets (real base ads, reposts, hard negatives).
- `reposts`, `negatives`: the reposts and hard negatives `make_labels` makes from one real ad.
- `places`, `textops`, `boilerplate`: locations, ad text and boilerplate blocks for those.
- `make_common_words`: write features/common_words.txt (words that name no employer).
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
"""The bundled data the tools read and write (the repository's data/, not an installed copy)."""
