"""Issue 33: the scope walk and the masked-value walk of issue 28, walked by people signed in
through the real OpenID provider (tests.identity_provider) instead of by a forced session. Each
walker's role and limits come from a group at the provider mapped to them
(tests.oidc_sign_in.provider_signed_in_as), and the walks are the same test functions."""

from __future__ import annotations

import pytest

from tests.access.test_masked_value_walk_widened import (  # noqa: F401  (fixtures and tests, walked again)
    planted,
    test_an_operator_sees_what_was_planted,
    test_no_answer_to_a_viewer_holds_a_value_a_person_or_a_message_wrote,
)
from tests.access.test_scope_walk_shows_nothing_of_b import (  # noqa: F401
    test_a_user_limited_to_a_reads_nothing_of_b_anywhere,
    test_every_url_naming_an_object_of_b_answers_403_or_404,
    test_ids_and_counts_a_user_limited_to_a_reads_are_a_s_alone,
    world,
)
from tests.oidc_sign_in import provider_signed_in_as  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture
def signed_in_as(provider_signed_in_as):  # noqa: F811
    """Every walker signs in through the provider (the session asserted to be theirs)."""
    return provider_signed_in_as
