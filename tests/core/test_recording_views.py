"""The default layout's views: which ones a run shows, and moved under a sweep's job."""

from core.recording import View, query_matches


def test_queries_match_an_entity_or_a_subtree():
    assert query_matches("world/planned/**", "/world/planned/left_link7/visual/g")
    assert query_matches("world/planned/**", "/world/planned")
    assert not query_matches("world/planned/**", "/world/plannedx")
    assert query_matches("/clearance/min_m", "clearance/min_m")
    assert not query_matches("clearance", "/clearance/x")
    assert query_matches("**", "/anything")


def test_a_view_shows_when_its_contents_were_logged_not_its_context():
    view = View("3d", "planned", ("world/planned/**",), ("world/scene/**",))
    assert not view.shows_any({"/world/scene/table", "/world/executed/peg"})
    assert view.shows_any({"/world/planned/left_hand"})
    moved = view.under("job3", "job3: planned")
    assert moved.queries == ["job3/world/planned/**", "job3/world/scene/**"] and moved.origin == "job3"
    assert moved.shows_any({"/job3/world/planned/left_hand"}) and not moved.shows_any({"/world/planned/x"})
