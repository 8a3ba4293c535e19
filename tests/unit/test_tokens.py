from mdcrawl.tokens import estimate_tokens


def test_estimate_is_characters_over_four_rounded_up():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2


def test_estimate_grows_with_the_text():
    page = "word " * 1000
    assert estimate_tokens(page * 2) == 2 * estimate_tokens(page)
