"""Reading the numbers people write (table-driven)."""

import pytest

from gpuplan.bot.language import values


@pytest.mark.parametrize(
    "text, billions",
    [
        ("70b", 70),
        ("70B", 70),
        ("7 billion", 7),
        ("0.5B", 0.5),
        ("700亿", 70),
        ("70亿", 7),
        ("1.5万亿", 1500),
        ("13", 13),
        ("175bn", 175),
        ("1T", 1000),
        ("6.7b", 6.7),
    ],
)
def test_model_size(text, billions):
    assert values.model_size_b(text) == pytest.approx(billions)


@pytest.mark.parametrize(
    "text, count",
    [
        ("2T", 2e12),
        ("300B", 3e11),
        ("1.4万亿", 1.4e12),
        ("100M", 1e8),
        ("50k", 5e4),
        ("1,000", 1000),
        ("5万", 5e4),
    ],
)
def test_quantity(text, count):
    assert values.quantity(text) == pytest.approx(count)


@pytest.mark.parametrize(
    "text, tokens",
    [("4k", 4096), ("32k", 32768), ("8192", 8192), ("128K", 131072), ("1M", 1048576), ("2048 tokens", 2048)],
)
def test_length(text, tokens):
    assert values.length(text) == tokens


@pytest.mark.parametrize(
    "text, days",
    [("14d", 14), ("2w", 14), ("2周", 14), ("30天", 30), ("两周", 14), ("36h", 1.5), ("3 months", 90), ("1个月", 30)],
)
def test_duration(text, days):
    assert values.duration_days(text) == pytest.approx(days)


@pytest.mark.parametrize(
    "text, usd, currency",
    [
        ("$50k", 50_000, "USD"),
        ("5万美元", 50_000, "USD"),
        ("50万人民币", 500_000 / values.CNY_PER_USD, "CNY"),
        ("5万块", 50_000 / values.CNY_PER_USD, "CNY"),  # 块 / 块钱: yuan, colloquially
        ("3000块钱", 3000 / values.CNY_PER_USD, "CNY"),
        ("¥72000", 10_000, "CNY"),
        ("2000 dollars", 2000, "USD"),
    ],
)
def test_money(text, usd, currency):
    value, cur = values.money_usd(text)
    assert value == pytest.approx(usd) and cur == currency


@pytest.mark.parametrize("text", ["abc", "", "-5b", "b70", "1e999b"])
def test_unreadable_sizes_raise_value_error(text):
    with pytest.raises(ValueError):
        values.model_size_b(text)


def test_chinese_small_numbers():
    assert values.cn_number("八") == 8 and values.cn_number("十六") == 16 and values.cn_number("二十") == 20


@pytest.mark.parametrize(
    "text, value",
    [
        ("三百", 300),
        ("一千二百", 1200),
        ("一千零八", 1008),
        ("一百零八", 108),
        ("两千", 2000),
        ("千", 1000),
        ("万", 10_000),
        ("十万", 100_000),
        ("一千二", 1200),  # spoken short forms: the last digit counts in the unit below
        ("两万五", 25_000),
        ("一百二十", 120),
    ],
)
def test_chinese_round_numbers(text, value):
    assert values.cn_number(text) == value


@pytest.mark.parametrize("text, value", [("5千", 5000), ("1.2万", 12_000), ("3百", 300), ("两千", 2000)])
def test_digits_with_a_chinese_unit(text, value):
    assert values.number(text) == value
