"""The Spark engine's tests reuse the main suite's fixtures (bundled data, default model)."""

from tests.conftest import DATA, default_model, held_out_model, held_out_result, test_ads, test_labels, test_result

__all__ = ["DATA", "default_model", "held_out_model", "held_out_result", "test_ads", "test_labels", "test_result"]
