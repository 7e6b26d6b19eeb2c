"""Read the prose of a question, one kind of thing at a time: GPU types and counts, models and
sizes, tokens and dataset sizes, sequence length, batches, schedule, budget, training options,
method and context ("8张H100", "Llama 3 70B", "8k context", "in two weeks", "$50k", "zero3").

Each extractor blanks what it consumed, so later extractors cannot read the same words twice and
what is left over can be reported as not understood. Two readings of one field never stop a
question: the first stands (or the target of a "from X to Y"), and the answer says which was used
and which was set aside. The vocabulary lives in knowledge/lexicon.yaml; the steps that have moved
to the reading engine (batches, schedule, budget, concurrency, the network, training options: see
engine.py) take the engine's readings of their rules (knowledge/rules/) at their place in the order,
and the rest move the same way.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator
from typing import Any

from rapidfuzz import fuzz, process

from gpuplan.bot.language import engine, values
from gpuplan.bot.language.artifact_words import vocabulary as artifact_words
from gpuplan.bot.language.compiled import compiled
from gpuplan.bot.language.patterns import literal_first
from gpuplan.bot.language.repo_ids import looks_like_repo_id
from gpuplan.bot.language.sections import hits, section_pattern
from gpuplan.bot.language.vocabulary import ORG_BEFORE, VENDOR_BEFORE, Vocabulary, method_word, vocabulary
from gpuplan.estimator.hardware import could_have
from gpuplan.estimator.schema import Note
from gpuplan.knowledge import Catalog, normalize_name

CJK = values.CJK
EN_NUMBERS, NUM, count_value = values.EN_NUMBERS, values.NUM, values.count_value
# how far before a name its count is looked for: the longest count with its words ("a couple of
# 8x", "3*8*", "2台8卡") is far shorter; searching all the text before it cost time on long pastes
COUNT_WINDOW = 48
MAX_READ_NUMBER = 1e15  # larger numbers in prose are not read: no count, size or length is that big


# the parameters an MoE activates per token: "32B active", "32b activated", "激活32B", "20b 激活", "A22B" after a size
_ACTIVE_SIZE = (
    r"(\d+(?:\.\d+)?)\s*b(?:illion)?\s*(?:params?|parameters?)?\s*(?:active|activated)(?![a-z])"
    r"|激活(?:参数)?(?:量)?\s*(\d+(?:\.\d+)?)\s*b|(\d+(?:\.\d+)?)\s*b\s*(?:参数)?\s*激活"
    r"|(?<=\db-)a(\d+(?:\.\d+)?)b(?![a-z0-9])"
)
# thousands of cards, after a word that puts the job on them ("on 16k H100", "with 100k H100s",
# "用1万张"): "8k a100" alone may be a context length and is not read
_THOUSANDS_BEFORE = r"(?:\bon|\bwith|\busing|\bacross|\bof)\s+(\d+(?:\.\d+)?)\s*k\s*[x×]?\s*$"
# a prompt's and a response's lengths, each the first group present ("Prompt length: 40K",
# "max_response_length=4096", "输出长度 2048"): a sequence is both
_LENGTH_VALUE = r"\s*(?:of|=|:|is|为|是|：)?\s*(\d+(?:\.\d+)?\s*k?)(?![a-z0-9])"
_PROMPT_LENGTH = (
    r"(?:max[_ ]?)?prompt[_ ]?(?:length|len)" + _LENGTH_VALUE + r"|(?:输入|提示词?|prompt)\s*长度" + _LENGTH_VALUE
)
_RESPONSE_LENGTH = (
    r"(?:max[_ ]?)?(?:response|output|generation|completion)[_ ]?(?:length|len)"
    + _LENGTH_VALUE
    + r"|(?:输出|回复|回答|生成|response)\s*长度"
    + _LENGTH_VALUE
)
# "nodes of 8 H100": the count after it is one machine's
_MACHINES_OF = re.compile(r"(?:nodes?|servers?|machines?|boxes|hosts?)\s+(?:of|with)\s+(?:\d+\s*[x×*]?\s*)?$")
# the word for parameters before the size: "总参数1T", "参数量 70B", "total parameters: 1.5T"
_PARAMS_THEN_SIZE = (
    r"(?:总参数量?|参数量|参数规模|total param(?:eter)?s?\s*(?:count)?)\s*(?:为|是|[:：=])?\s*"
    r"(\d+(?:\.\d+)?)\s*(t|b|万亿|亿)(?![a-z])"
)
# a size written right after a family name the catalog does not have ("pythia 410m", "smollm 1.7b")
_SIZE_AFTER_NAME = re.compile(r"[\s\-_]*(\d+(?:\.\d+)?\s*[bm])(?![a-z0-9]|\.\d)")


def _size_in_name(name: str) -> float | None:
    """Billions of parameters a model's name carries ("pythia-410m" 0.41, "foo-7b" 7), else None."""
    size = re.search(r"(\d+(?:\.\d+)?)\s*([bm])(?![a-z])", name)
    return None if not size else float(size.group(1)) / (1000 if size.group(2) == "m" else 1)


def family_model(prefixes: tuple[str, ...], size_b: float, version: str, cat: Catalog) -> str | None:
    """The catalog model of a family of about `size_b` (within 15%): one whose id carries the size,
    the newest version first ("qwen 14b" -> Qwen3 14B); with a version written ("qwen2 72b"), only
    that version's."""
    wanted = normalize_name(version).lstrip("v")
    # the size as ids write it ("405b", "125m"): an id that carries it is the one meant ("llama 405"
    # is Llama 3.1 405B, not the newer Llama 4 Maverick of 400B)
    nominal = f"{size_b:g}b" if size_b >= 1 else f"{size_b * 1000:g}m"
    folded = tuple(normalize_name(p) for p in prefixes)
    candidates = []
    for key, spec in cat.model_keys:
        published = spec.params_b + spec.vision_params_b  # "InternVL 26B" counts its vision encoder
        if abs(published - size_b) > 0.15 * size_b or not key.startswith(folded):
            continue
        prefix = next(p for p in folded if key.startswith(p))
        rest = key[len(prefix) :]
        if wanted and not rest.lstrip("v").startswith(wanted):  # "internvl 1.5": internvl-chat-v1-5
            continue
        release = re.match(r"(\d+(?:\.\d+)?)", spec.id[len(prefix) :].lstrip("-_ v"))
        newest = float(release.group(1)) if release and not wanted and float(release.group(1)) < size_b else 0.0
        named = bool(re.search(rf"(?<![\d.]){re.escape(nominal)}(?![a-z0-9])", spec.id))
        candidates.append((not named, -newest, abs(published - size_b), spec.id))
    return min(candidates)[-1] if candidates else None


def named_here(match: re.Match, text: str, cat: Catalog) -> str | None:
    """The catalog model an alias match names, unless a size written right after it is another model's
    ("bigcode/starcoderbase-3b", "starcoder:1b" are not StarCoder 15B)."""
    found = model_id(match.group(1), cat)
    return None if found and other_size_follows(text, match.end(), found, cat) else found


# a size after a catalog name, a version between them allowed ("Qwen-VL-2.5-3B"), an expert count after
_OTHER_SIZE_AFTER = re.compile(r"^[\s\-_:]*(?:v?\d+\.\d+[\s\-_]+)?(\d+(?:\.\d+)?)\s*(b|m)(?![a-z])(\s*[x×*]\s*\d+)?")


def other_size_follows(text: str, end: int, found_id: str, cat: Catalog) -> bool:
    """A size right after a catalog name that is not its size ("BLOOM 1.1B", "starcoder:1b"), also
    after a version written in between ("Qwen-VL-2.5-3B"). An expert's size times the experts
    ("Mixtral-7B*8") is the MoE's own name, written the other way round."""
    after = _OTHER_SIZE_AFTER.search(text[end : end + 20])
    if not after or (after.group(3) and cat.models[found_id].experts > 1):
        return False
    size = float(after.group(1)) / (1000 if after.group(2) == "m" else 1)
    return abs(size - cat.models[found_id].params_b) > 0.2 * size


def _same_product(base: str, name: str) -> bool:
    """Whether a catalog name is of the product `base` names: "nvidia h20" is not the H200."""
    return re.search(r"(?<![a-z0-9])" + re.escape(base) + r"(?![a-z0-9])", name) is not None


def _product(name: str) -> str:
    """A catalog GPU's name without its memory and form factor: "nvidia v100 sxm2 32gb" -> "nvidia v100"."""
    return _FORM.sub(" ", re.sub(r"\s*\d+\s*gb.*$", "", name.lower())).strip()


def variant_with_memory(found_id: str, gib: float, cat: Catalog) -> str | None:
    """The catalog type of the same GPU with `gib` of memory: ("a100-80gb", 40) -> "a100-40gb"."""
    gpu = cat.gpus[found_id]
    if abs(gpu.memory_gib - gib) <= 0.1 * gib:
        return found_id
    base = _product(gpu.name)
    for other in cat.gpus.values():
        name = other.name.lower()
        if other.family == gpu.family and _same_product(base, name) and abs(other.memory_gib - gib) <= 0.1 * gib:
            return other.id
    return None


_FORM = re.compile(r"\s*(?:sxm\d?|pcie|nvl)\s*", re.I)
_FORM_FIRST = re.compile(r"[-\s]*(?:sxm\d?|pcie|nvl)(?![a-z])(?=[-\s]*\d)", re.I)


def variant_with_form(found_id: str, form: str, cat: Catalog) -> str | None:
    """The catalog type of the same GPU in another form factor with the same memory: ("a800-80gb",
    "pcie") -> "a800-pcie-80gb"; none when the form comes with other memory only (an A800 SXM4 40GB
    stays the 40 GB card: memory sizes the plan)."""
    gpu = cat.gpus[found_id]
    base = _product(gpu.name)
    others = [
        g
        for g in cat.gpus.values()
        if g.family == gpu.family
        and _same_product(base, g.name.lower())
        and form in g.name.lower().replace("sxm4", "sxm").replace("sxm5", "sxm")
        and abs(g.memory_gib - gpu.memory_gib) <= 0.1 * gpu.memory_gib
    ]
    others.sort(key=lambda g: abs(g.memory_gib - gpu.memory_gib))
    return others[0].id if others else None


def gpu_id(matched: str, voc: Vocabulary, cat: Catalog) -> str | None:
    """The catalog id of a GPU name as written ("a100 80g", "h-200")."""
    key = re.sub(r"[\s\-_]+", " ", matched.lower()).strip()
    if key in voc.gpu_by_alias:
        return voc.gpu_by_alias[key]
    gpu = cat.find_gpu(matched)
    return gpu.id if gpu else None


_NUMBERS = re.compile(r"\d+(?:\.\d+)?")


def model_id(matched: str, cat: Catalog) -> str | None:
    """The catalog model a written name is, when its numbers are that model's: "internvl 38b" folds
    to the key of "internvl3-8b" but writes 38, so it is no name of InternVL3 8B."""
    spec = cat.find_model(matched)
    if spec is None:
        return None
    numbers = _NUMBERS.findall(matched.lower())
    named = any(_NUMBERS.findall(name.lower()) == numbers for name in (spec.id, spec.name, *spec.aliases))
    return spec.id if named else None


# the servers' own RAM: "内存 256G", "内存1T", "CPU内存512GB", "512GB RAM", "host memory: 1TB"
_RAM_WORDS = (  # "GPU RAM", "video RAM" and 显存 are a GPU's
    r"(?:(?<!显)内存|(?<![a-z])(?<!gpu )(?<!video )(?<!graphics )ram"
    r"|host memory|cpu memory|system memory|主机内存|cpu内存)"
)
_RAM_SIZE = r"(\d{1,5}(?:\.\d+)?)\s*(g|gb|gib|t|tb|tib)(?![a-z])"
# words after a size that make it a count of tokens ("10B 说的是 token 数", "2T of tokens")
# a size that counts tokens: "10B 说的是 token 数", "1B tokens", "1B * 8 epochs = 8B" (data times
# passes, worked out; "7b x 3 epochs" alone stays a model trained three times over its data)
_TOKENS_AFTER = re.compile(
    r"\s*(?:(?:说的是|指的是|是指|是|指|of|的)?\s*tokens?(?![a-z])|[*x×]\s*\d+\s*(?:epochs?|epoches|轮|个\s*epoch)\s*[=≈])"
)
# what joins a count to the thing counted after it: a memory or card ("8张24G", "two 24GB", "4x 80GB"),
# an instance ("2 x p4d.24xlarge", "2x ml.g5"), a DGX ("96 DGX-A100", "2台DGX")
_CARDS_JOINER = r"(?:x|×|\*|张|块|个)?"
# the counts() readings: "2台8卡" and "4 nodes with totally 32 gpus" (nodes, then cards)
_NODES_OF_CARDS = (
    NUM
    + r"\s*(台|机器?|nodes?|servers?|machines?|boxes|workers?|hosts?|instances?)\s*(?:of|x|×|with|each with|,)?\s*"
    + r"(?:(totally|in total|a total of|in all)\s*)?"  # "4 nodes with totally 32 gpus": a total
    + NUM
    + r"\s*(?:张|块)?\s*(?:卡|显卡|gpus?|cards?)(?:\s*each)?"
)
_CARDS_ACROSS_NODES = (  # "16 GPUs across 2 nodes"
    NUM + r"\s*(?:gpus?|cards?|卡)\s*(?:across|over|on|in)\s*" + NUM + r"\s*(?:nodes?|servers?|machines?)"
)
_PLAIN_CARDS = (
    NUM
    + r"(?:[^\S\n]*|-)(?:x[^\S\n]*)?(?:张|块|个)?[^\S\n]*"
    + r"(?:(?:gpus?|cards?|graphics cards?)(?![a-z])|卡|显卡)"  # "32卡oom了": 卡 before a Latin letter
)
_ONE_CARD = (
    r"单卡(?!显存|占用|内存|的显存|batch|吞吐|速度)|单张(?:卡|显卡|gpu)|一张(?:卡|显卡)|"
    r"(?:a |one )?single (?:gpu|card)|one gpu|1 gpu(?![a-z])|a gpu(?![a-z])"
)
_NODES_WORDS = (  # "4-node", "2 servers", "two gpu servers", "6台PC", "共 4机"
    r"(?:\s+gpus?\s+|\s*|-)"
    r"(?:nodes?|servers?|machines?|pcs?|workstations?|台(?:服务器|机器|电脑|主机|工作站|pcs?)?|机器"
    r"|机(?![器架房柜]))"
    r"(?![a-z])"
)
_INSTANCES_JOINER = r"(?:x|×|\*)?\s*(?:ml\.)?"
_SERVERS_JOINER = r"(?:x|×|\*|台|个)?"
# what joins a method word to a negated one before it: negated too ("without PEFT and quantization")
_JOINED_TO_NEGATED = re.compile(r"\s*(?:and|or|nor|,|、|和|或|与|/)\s*")
# words before a memory that make it what a job uses, not a card's ("cost 17GB GPU mem", "占用了20G显存");
# what a job "needs" stays a card asked about ("7b推理需要24G显存吗")
# words of need before a memory: what a model or a recipe needs, not a card's ("需要显存为60G", "needs a
# GPU memory of 26GB", "至少24G")
_NEED_BEFORE = re.compile(
    r"(?:\bneeds?|\brequires?|\brequired|\bminimum|\bat least|需要|要求|至少|最少|最低)"
    r"[^\n，。,.;；!?！？]{0,12}$"
)
_USAGE_BEFORE = re.compile(
    r"(?:\bcosts?|\btakes?|\btook|\buses|consum\w*|occup\w*|\beats?|\breach\w*"
    r"|占用了?|占了|消耗了?|吃了|达到了?|涨到|升到|飙到)\s*"
    r"(?:about|around|roughly|nearly|almost|over|~|约|大约|了|近|差不多|将近|接近|大概|快)?\s*$"
)
# words of summing: a count said to be the whole ("a total of 32xH100s", "totally 32 gpus", "一共32张") sums
# the parts written before it; a memory said so is all the cards' together
_TOTAL_WORDS = r"(?:\ba total of|\btotally|\bin total|\bin all|\baltogether|加起来|总共|一共|合计|总计|共)"
# a memory said to be all the cards' together ("加起来也就96G显存", "192 GB VRAM in total"): no card's own
_ALL_CARDS_BEFORE = re.compile(_TOTAL_WORDS + r"\s*(?:也就|只有|才|是|有|约|大约|也)?\s*$")
_ALL_CARDS_AFTER = re.compile(
    r"\s*(?:of\s+)?(?:gpu\s+)?(?:vram|memory|显存)?\s*(?:(?:in total|total|combined|altogether)(?![a-z])|总计|合计)"
)
# words after a memory that ask whether it is enough ("8G显存够吗", "24GB enough?")
_ENOUGH_AFTER = re.compile(r"\s*(?:够|足够|能不能|可以|enough|suffic)")
# what every memory reading has: a number and its unit ("24g", "80 GB", "1T")
_MEMORY_SIZE = re.compile(r"\d\s*(?:g|gb|gib|t|tb|tib)(?![a-z])")
_HOST_RAM = re.compile(
    _RAM_WORDS + r"\s*(?:is|of|:|：|为|是|有|只有|共)?\s*" + _RAM_SIZE + "|" + _RAM_SIZE + r"\s*(?:of\s+)?" + _RAM_WORDS
)
# a form factor right after a GPU's name and count, in the same clause ("A800单机8卡PCIE", "H100 x8 SXM")
_FORM_AFTER = re.compile(r"^[^,，。.;；:：\n]{0,10}?(?<![a-z])(sxm\d?|pcie|nvl)(?![a-z])")
# after a GPU name: the count before it was of machines ("4台 A800 机器", "two H100 servers")
_MACHINES_AFTER = re.compile(r"\s*(?:的)?\s*(?:机器|服务器|主机|节点|servers?\b|machines?\b|nodes?\b|boxes\b)")
# a count said per server: "每台8张", "each with 8", "8 A100 per node" (the count may stand between)
_PER_NODE_BEFORE = re.compile(
    r"(?:每台|每机|每个?节点|每个?服务器|each(?: node| server| machine| box)?(?: with| has)?"
    r"|per (?:node|server|machine))[:：,，]?\s*(?:有|是|配|装|带|都是)?[\s\d一二两三四五六七八九十张块个x×*]*$"
)
_PER_NODE_AFTER = re.compile(  # "8 H100 per node", "8 T4 16GB GPU on each"
    r"\s*(?:\(?\d+\s*g(?:b|ib)?\)?)?\s*(?:gpus?|cards?)?\s*"
    r"(?:per (?:node|server|machine)|(?:on |in )?each|/node|每台|每机)"
)
# a count with the word GPU before a GPU's name ("8 GPU A100", "8-GPU A800"; not "cuda 12.0\ngpu A100")
_GPU_WORD_COUNT = re.compile(r"(?<![\w.])(\d{1,5})[^\S\n]*-?[^\S\n]*gpus?[^\S\n]+$", re.I)
# after a number read as a length: more digits or a "k" (backtracking), a range's dash ("16-32k": the
# tokens reader takes its top), a count of GPUs or nodes ("context length to 32 GPUs") or a filter's
# threshold ("序列长度小于128的样本")
_NOT_A_LENGTH_AFTER = (
    r"(?!\d|\.\d|\s*[km](?![a-z])|\s*[-~–到至]"
    r"|\s*(?:gpus?|cards?|nodes?|servers?|machines?|卡|张|台|节点|机|的样本|的数据|samples?|examples?)(?![a-z]))"
)
# a Chinese count whose cards a 的-phrase describes by what they have or their state ("4个没有NVLink的
# V100", "两张二手的3090"); 个 counts any noun ("2个版本的A100", "3个月的A100"), so only these openings
_COUNT_THEN_DESCRIBED = (
    r"\s*(?:张|块|个)\s*(?:没有|不带|带|有|支持|二手|全新|闲置|空闲|可用|坏掉?|旧|新)[^\s\d，。,.;；：:、]{0,10}的\s*$"
)
# one server word after a count in digits: the server's GPUs ("an 8 GPU server"; "two gpu server(s)" are servers)
_ONE_SERVER_AFTER = re.compile(r"\s+(?:node|server|machine|box)(?![a-z])")
# a GPU count's word followed by a server word without a hyphen: servers counted ("two gpu servers")
_GPU_SERVERS = re.compile(r"(?<!-gpu)(?<!-gpus)\s+(?:servers?|machines?|nodes?|boxes)\b")
# words before a count that make it what the user compares against ("slower than 1 node", "比单机慢")
_BASELINE = re.compile(
    r"(?:\bthan|compared (?:to|with)|\bvs\.?|\bversus|相比|比起?|对比)\s*(?:on|with|using|a|the|用|在)?\s*$"
)
_MOVE_FROM = re.compile(r"(?:from|从|mov\w*|switch\w*|went|upgrad\w*|scal\w*|increas\w*|expand\w*|扩|升级|换)\W*$")
_MOVE_TO = re.compile(
    r"^[^.。!?！？\n]{0,40}?(?:\bto\b|->|→|=>|\binto\b|换成|改成|改为|变成|扩到|增加到|扩展到|升级到|到)"
)


_DESKTOP = re.compile(r"GeForce|TITAN|Quadro|RTX", re.I)  # desktop and workstation cards people own one of
# a Chinese count written after a card and its memory ("用了4090 24G 4张", "A100 80G 8张"): the cards', not
# images' or pages' ("3张图")
_COUNT_AFTER_ZH = re.compile(
    r"\s*(\d{1,3})\s*(?:张|块)(?!\s*(?:图|照片|表|纸|显存|内存|的?样本|钱|多|元|/|每|一?小时|秒|截图|[a-z0-9]))"
)  # not a price ("8块钱一小时", "2块多"), a rate ("1000张/秒") or the next card's count ("2张A100")
_CARDS_AFTER = re.compile(r"\s*(?:卡|显卡|张|gpus?\b|cards?\b)")  # "16台H100卡": the 台 counts cards
# what a bare card number counts when it is a number of things instead ("3090 steps", "1650条样本")
_QUANTITY_AFTER = re.compile(
    r"\s*(?:steps?|samples?|examples?|tokens?|iterations?|iters?|epochs?|rows?|records?|items?|sentences?|"
    r"documents?|files?|queries|requests?|images?|条(?!件)|步(?!骤)|个样本|轮(?!流)|次(?!数)|张图)(?![a-z])"
)
_LINK = re.compile(r"https?://[^\s\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+")  # up to a space or CJK text
# a hardware line's count before the GPU's name: "GPU: 1x3090", "- GPUs: 8 x A100", "显卡：2*4090"
_LABELLED_COUNT = re.compile(
    r"^\s*(?:[-*]\s*)?(?:gpus?(?:\s*(?:type|model))?|graphics cards?|显卡|gpu型号)\s*[:：]\s*(\d{1,4})\s*[x×*]\s*"
    r"(?:(?:nvidia|tesla|geforce)\s+)*$",
    re.M,
)
# a script or config file whose name may say the method ("train_ppo.sh", "llama3_lora_sft.yaml",
# "run_dpo.py"), or a module run with `python -m` ("openrlhf.cli.train_ppo_ray"): what it is for
_SCRIPT_FILE = re.compile(r"(?<![\w./-])[\w./-]+\.(?:sh|py|ya?ml|json)(?![\w])|(?<=-m )[a-z_][\w]*(?:\.[a-z_]\w*)+")
# InfiniBand or RoCE named without a speed, on a GPU type whose servers usually have another
# network: the older generation (HDR 200 Gb/s InfiniBand, 200 GbE RoCE), the cautious reading
UNSTATED_SPEED = {"ib": "ib-hdr200", "roce": "roce-200"}
# fewer tokens than this, written as a bare number, are a length, never a training set (not sourced:
# the smallest fine-tuning sets people plan for are thousands of samples of hundreds of tokens)
SHORTEST_DATASET_TOKENS = 100_000
# more tokens than this are no one sample's length (Llama 4 Scout's 10M-token context, the longest published)
LONGEST_SAMPLE_TOKENS = 10_000_000
# GPUs one server usually holds (NVIDIA HGX/DGX boards carry 8)
USUAL_GPUS_PER_SERVER = 8

# after "N tokens": a rate, or a length per item ("2048 tokens each", "4096 tokens per sample")
_RATE = re.compile(r"\s*(?:/\s*s|per second|a second|每秒|/秒)")
# an average length per sample: "averaging 1500 tokens", "平均每条800 token", "1500 tokens on average"
_AVERAGE_BEFORE = re.compile(
    r"(?:averag(?:e|ing)|avg\.?|mean|平均|每条|每个样本|per (?:sample|example|conversation)|each (?:sample|example))"
    r"(?: (?:length|size))?(?: of| is| was| about| around| roughly|长度|每条|为|是|约|大约|平均)*\s*~?\s*$"
)
_AVERAGE_AFTER = re.compile(r"\s*(?:on average|in average|avg|average|平均)")
_DATA_BEFORE = re.compile(r"(?:data(?:set)?|corpus|语料|数据)")
_CONTEXT_AFTER = re.compile(r"\s*(?:context|window|ctx|上下文|窗口|长度|length)")
_PER_ITEM = re.compile(r"\s*(?:each|long|per (?:sample|example|sequence|request|prompt|conversation|row|item)|每条)")


def token_count_kind(
    value: float, multiplied: bool, before: str, after: str, beside_samples: bool = False
) -> str | None:
    """What "N tokens" counts, from the words around it: nothing for a rate ("2000 tokens/s"), a
    sequence length ("128k token context", "2048 tokens each", "prompts of 1500 tokens": no dataset
    is that small), a sample's length ("samples averaging 1500 tokens"; "20k samples of 2k tokens"
    when a count of samples stands in its sentence), else the training tokens ("2T tokens",
    "training data is 50000 tokens")."""
    if _RATE.match(after):
        return None
    if _CONTEXT_AFTER.match(after) or (
        value <= 1_048_576 and _LONGEST_BEFORE.search(before) and not _DATA_AFTER.match(after)
    ):
        return "seq_len"
    if _sample_length(value, before, after, beside_samples):
        return "sample_tokens"
    if multiplied:
        return "train_tokens"
    if 64 <= value <= 131_072 and (_PER_ITEM.match(after) or _power_of_two(value)):
        return "seq_len"
    if 16 <= value < SHORTEST_DATASET_TOKENS and not _DATA_BEFORE.search(before):
        return "seq_len"
    return "train_tokens"


def _sample_length(value: float, before: str, after: str, beside_samples: bool) -> bool:
    """Whether "N tokens" is each sample's length: said to be an average or each one's ("averaging
    1500 tokens", "每条2k token"), or written beside a count of samples ("20k samples of 2k tokens",
    "10k examples, 4k tokens each") when too few tokens for a dataset or said per sample; never when
    the words make it a total ("80k tokens in total") or no sample is that long."""
    of_samples, total_before, total_after = _sample_length_words()
    if not 16 <= value <= LONGEST_SAMPLE_TOKENS or total_before.search(before) or total_after.match(after):
        return False
    if _AVERAGE_BEFORE.search(before) or _AVERAGE_AFTER.match(after):
        return True
    per_sample = of_samples.search(before) or _PER_ITEM.match(after)
    return beside_samples and (value < SHORTEST_DATASET_TOKENS or bool(per_sample))


@functools.cache
def _samples_counted() -> re.Pattern:
    """A count of samples, the number in groups 1 and 2: "20k samples", "1M conversations", "2万条样本"."""
    return re.compile(
        NUM
        + r"\s*"
        + values.multiplier_pattern()
        + r"\s*(?:training\s+|support\s+|customer\s+|labell?ed\s+)?(?:"
        + vocabulary().sample_nouns
        + ")"
    )


@functools.cache
def _sample_length_words() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """(samples "of" a length before it, a total's words before a token count, and after it)."""
    voc = vocabulary()
    total = voc.token_total.pattern
    return (
        re.compile(rf"(?:{voc.sample_nouns})\s+(?:of|with)\s*(?:about|around|roughly|approximately|~)?\s*~?\s*$"),
        re.compile(rf"(?:{total})\s*(?:of|is|was|:|：|约|大约|有|是|为)?\s*(?:about|around|~)?\s*$"),
        re.compile(rf"\s*(?:{total})"),
    )


# before a token count: the top of a range or a bound ("16-32k tokens", "up to 32k tokens", "最长32k token"),
# as lengths are written; the longest sequence is the one to plan for
_PER_BEFORE = re.compile(r"(?:(?<![a-z])(?:per|every|each)|每)\s*$")
_DATA_AFTER = re.compile(r"\s*(?:of\s+)?(?:training\s+)?(?:data|dataset|corpus|text|pre-?training|training|数据|语料)")
_LONGEST_BEFORE = re.compile(r"(?:(?<![\d.])\d+(?:\.\d+)?\s*k?\s*(?:-|~|to|至|到)|up to|upto|at most|最长|至多)\s*$")


def _power_of_two(value: float) -> bool:
    return value == int(value) and int(value) & (int(value) - 1) == 0


_SIZED = re.compile(r"\d(?:\.\d+)?\s*[bm](?![a-z])|\d[x×]\d")  # an alias that names its size
_SENTENCE_END = re.compile(r"[.!?。！？\n]")
_QUESTION = re.compile(r"[?？]|^\s*(?:can|could|how|what|which|is|are|do|does|will|would)\b|吗|多少|能否|可否|怎么")


def _asked_over(text: str, asked: tuple[int, int], other: tuple[int, int]) -> bool:
    """A count in the sentence that asks, against one in a statement that is no more the user's own
    ("One H100 will oom ... How to use two H100?"; not "我有4个gpu ... 应该选择多卡还是单卡？")."""
    return _in_question(text, asked) and not _in_question(text, other) and owner(text, asked) >= owner(text, other)


# where a sentence ends, for what a sentence holds: not a decimal point ("qwen2.5", "1.5k samples")
_SENTENCE_BREAK = re.compile(r"[!?。！？\n]|\.(?!\d)")


def _sentence(text: str, span: tuple[int, int]) -> str:
    """The sentence the words at `span` stand in."""
    start = max((m.end() for m in _SENTENCE_BREAK.finditer(text, 0, span[0])), default=0)
    end = _SENTENCE_BREAK.search(text, span[1])
    return text[start : end.start() if end else len(text)]


def _in_question(text: str, span: tuple[int, int]) -> bool:
    """Whether the words at span stand in a sentence that asks something."""
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, span[0])), default=0)
    end = _SENTENCE_END.search(text, span[1])
    sentence = text[start : end.end() if end else len(text)]
    return bool(_QUESTION.search(sentence.lower()))


# punctuation, or a gap: two spaces, or a space before 我 ("... + DeepSpeed  我想问是否能用 4090")
_CLAUSE_END = re.compile(r"[.。!?！？;；\n,，:：]|\s{2,}|\s(?=我)")
# a possessive right before a name: the user's own ("my 3090", "我的3090", "our A100s")
_MINE_BEFORE = re.compile(r"(?:\bmy|\bour|我的|我们的|我这边的?|我这里的?|自己的|本人的)\s*(?:own\s+)?$")


def _clause(text: str, span: tuple[int, int]) -> str:
    """The clause the words at `span` stand in (up to commas, colons and sentence ends)."""
    start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, span[0])), default=0)
    end_match = _CLAUSE_END.search(text, span[1])
    return text[start : end_match.start() if end_match else len(text)]


def lacked(text: str, span: tuple[int, int]) -> bool:
    """Whether the clause around `span` says the user lacks it ("A100s aren't available to me")."""

    return section_pattern("lacking").search(_clause(text, span)) is not None


def owner(text: str, span: tuple[int, int]) -> int:
    """+3 in a clause saying the user means to get it ("planning to buy", "打算买"); +2 right after
    "my" / "我的"; +1 when the clause around `span` speaks of the user's own setup
    ("I have", "我这里"), -1 when it quotes someone else's (a paper, a README, the official
    benchmark), one the user had before ("以前", "previously"), one they lack ("没有") or one that
    shows the same thing too ("也会出现同样的情况"), else 0."""

    clause = _clause(text, span)
    if section_pattern("prospective").search(clause):
        return 3  # "I have a 3090 ... planning to buy a 4090": what they mean to get is what they ask about
    if _MINE_BEFORE.search(text, max(0, span[0] - 12), span[0]):
        return 2  # "别人的2080ti比我的3090快": a possessive right before the name says more than the clause
    if any(section_pattern(s).search(clause) for s in ("earlier", "lacking", "also_seen")):
        return -1  # "I used to train on 1 GPU", "A100s aren't available", "also happens with": not what is asked about
    mine = section_pattern("first_person").search(clause) is not None
    theirs = section_pattern("reference").search(clause) is not None
    return int(mine) - int(theirs)


def moves_to(text: str, first: tuple[int, int], second: tuple[int, int]) -> bool:
    """True for "from <first> to <second>" ("moved from 1 node to 4 nodes", "从单机扩到4机")."""
    if second[0] < first[1]:
        return False
    before = text[max(0, first[0] - 24) : first[0]]
    return bool(_MOVE_FROM.search(before) and _MOVE_TO.search(text[first[1] : second[0]]))


# --- the text being read ------------------------------------------------------------------------


@functools.cache
def _rx(pattern: str) -> re.Pattern:
    """Each extractor pattern compiled once per process, its leading guards after its first word
    (literal_first: the same matches, scanned for faster)."""
    return compiled(literal_first(pattern))


# the units of a duration (values.duration_days reads them)


# a quantised checkpoint's name ("Qwen2.5-72B-Instruct-AWQ", "llama-3-70b-gptq"): AWQ and GPTQ
# checkpoints are 4-bit weights (AutoAWQ's and AutoGPTQ's default w_bit / bits = 4)
_QUANTISED_NAME = re.compile(r"(?:awq|gptq)")
# a count given as a bound ("9 or more H100s", "at least 16 GPUs", "至少8张"): what is needed, which
# a setup written out ("I have two nodes, each with 8") says more about
_BOUND = re.compile(r"\bor (?:more|fewer|less)\b|\bat (?:least|most)\b|至少|最少|以上|以下")
_MEMORY_SAID = re.compile(r"\d\s*(?:g|gb|gib)\b")


def _refines(reading: tuple, other: tuple) -> bool:
    """Whether a GPU reading names the other's card with its memory ("v100 16gb" after "v100"): the
    same card, said more exactly."""
    (_, card, words), (_, other_card, other_words) = reading, other
    stem, other_stem = (re.sub(r"-\d+(?:\.\d+)?gb$", "", c) for c in (card, other_card))
    return stem == other_stem and bool(_MEMORY_SAID.search(words)) and not _MEMORY_SAID.search(other_words)


def _bounded(text: str, reading: tuple) -> bool:
    """Whether a (span, value, words) reading is a bound: its words, or the words right before it."""
    (start, _), _, words = reading
    return bool(_BOUND.search(words) or _BOUND.search(text, max(0, start - 12), start))


_TOTAL_BEFORE = re.compile(
    _TOTAL_WORDS + r"\s*(?:需要|要|用|有)?\s*(?:\d{1,6}\s*(?:[x×*]|张|块|台|gpus?|cards?)?\s*)?$", re.I
)


def _totalled(text: str, reading: tuple) -> bool:
    """Whether a (span, value, words) count reading is said to be a total: in its words ("4 nodes with
    totally 32 gpus" sets both counts) or right before them."""
    (start, _), _, words = reading
    return bool(re.search(_TOTAL_WORDS, words) or _TOTAL_BEFORE.search(text, max(0, start - 24), start))


# cards spoken of in the plural: a memory written with them is each card's, their number is open
_CARDS_PLURAL = re.compile(
    r"(?<![a-z])(?:gpus|cards|graphics cards)(?![a-z])|多张|多卡|多块|几张|几块|每张|每块|每个(?:卡|显卡|gpu)"
)


# the KV cache's element type written in prose ("fp8 kv cache", "KV cache in int8", "kv cache 量化为 int4")
_KV_CACHE_TYPE = re.compile(
    r"(?:kv[ _-]?cache|kv)(?:[ _-]?dtype)?\s*(?:=|:|：|为|用|in|of|quantized to|量化(?:为|成|到)?)?\s*"
    r"(fp8|int8|int4|8[ -]?bit|4[ -]?bit)(?![a-z0-9])"
    r"|(?<![a-z0-9])(fp8|int8|int4|8[ -]?bit|4[ -]?bit)\s*(?:的)?\s*kv[ _-]?cache"
)
_KV_KINDS = {"fp8": "fp8", "int8": "int8", "int4": "int4", "8bit": "int8", "4bit": "int4"}
_TOTAL_AFTER = re.compile(r"\s*(?:in total|total|combined|altogether|总共|总计|合计|共)")


# between two GPU mentions of one mixed setup: a joining word and little else ("服务器 和 一台 80G", "+1张")
_MIXED_JOIN = re.compile(
    r"\s*(?:gpus?|cards?|服务器|机器|显卡|卡)?\s*[)）]?\s*(?:和|与|跟|加上?|外加|\+|&|\band\b|\bplus\b)"
    r"[^,，.。;；:：?？!！\n]{0,16}$"
)


_PLUS = re.compile(r"\+|加|\bplus\b")


def _joined_mentions(
    text: str, mentions: list[tuple[str, tuple[int, int], int | None, int | None]]
) -> list[tuple[str, tuple[int, int], int | None, int | None]]:
    """The first run of GPU mentions of at least two types, each with a count, joined one to the
    next by "and" / "和" / "+" with little between: the parts of one setup."""
    run: list = []
    for mention in mentions:
        between = text[run[-1][1][1] : mention[1][0]] if run else ""
        if mention[2] and run and len(between) <= 24 and _MIXED_JOIN.match(between):
            run.append(mention)
            continue
        if len({g for g, _, _, _ in run}) >= 2:
            break
        run = [mention] if mention[2] else []
    return run if len({g for g, _, _, _ in run}) >= 2 else []


class Scan:
    """The lower-cased question; extractors blank what they consume (positions stay stable)."""

    def __init__(self, text: str):
        self.text = text.lower()
        self.original = self.text
        self.last_span = (0, 0)

    def search(self, pattern: re.Pattern | str) -> re.Match | None:
        return (_rx(pattern) if isinstance(pattern, str) else pattern).search(self.text)

    def finditer(self, pattern: re.Pattern | str) -> Iterator[re.Match]:
        """Matches in the text as it is now (blanking while iterating keeps positions: same length)."""
        return (_rx(pattern) if isinstance(pattern, str) else pattern).finditer(self.text)

    def blank(self, start: int, end: int) -> None:
        self.text = self.text[:start] + " " * (end - start) + self.text[end:]

    def take(self, match: re.Match, group: int = 0) -> str:
        start, end = match.span(group)
        self.last_span = (start, end)
        taken = self.text[start:end]
        self.text = self.text[:start] + " " * (end - start) + self.text[end:]
        return taken.strip()


_REPO_ID = re.compile(r"(?<![\w./-])(?:https?://huggingface\.co/)?[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*[A-Za-z0-9]")


_SINGLE = r"(单卡|单张卡|单张显卡|单张|一张卡|一块卡|(?:a|one|single) )"
# words that make a memory written apart from a GPU's name the card's own ("单卡48G", "显存只有40G",
# "8*24G"); without them a memory no catalog variant of the named card has is something else's:
# what a model needs ("需要大概 13GB 显存 ... Tesla P40"), another setup's ("样例是在96GB的卡上")
_OWN_IF_SAID = re.compile(r"每|为|是|有|只有|仅有|only|memory of")
# a GPU given by its memory: (pattern with groups (count words, GiB), whether the words mean one GPU,
# whether they make it a named card's own: always (True), never (False) or when _OWN_IF_SAID matches)
_MEMORY_PATTERNS = (
    (_SINGLE + r"\s*(\d+(?:\.\d+)?)\s*(?:g|gb|gib)(?![a-z])(?:\s*(?:的)?(?:显存|vram|gpu|card|卡|显卡))?", True, True),
    (
        r"()(?:显存|vram|memory of|每卡|每张卡)\s*(?:为|是|有|只有|仅有|就|only)?\s*"
        r"(\d+(?:\.\d+)?)\s*(?:g|gb|gib)(?![a-z])(?:\s*的?\s*(?:显卡|卡|gpu|card)(?![a-z]))?",
        False,
        _OWN_IF_SAID,
    ),
    (  # "24G的卡", "80GB GPUs"; a count before it ("8张24G的卡", "two 24GB cards") is _count_before's
        r"()(?<![\d.])(\d+(?:\.\d+)?)\s*(?:g|gb|gib)\s*(?:的)?\s*(?:显存|vram|gpus?|cards?|卡|显卡|graphics)",
        False,
        False,
    ),
    # "8*24G", "2*24GB", "8x80GB", "2张24G": a count times a memory
    (NUM + r"\s*(?:[*x×]|张|块)\s*(?<![\d.])(\d+(?:\.\d+)?)\s*(?:g|gb|gib)(?![a-z])", False, True),
    # "8 card x 16GB", "8卡*32G": each card's memory after a count of cards (counts() reads the count)
    (
        r"()(?:(?<=card)|(?<=cards)|(?<=gpu)|(?<=gpus)|(?<=卡))\s*[*x×]\s*(\d+(?:\.\d+)?)\s*(?:g|gb|gib)(?![a-z])",
        False,
        True,
    ),
    # "20G 够不够", "24GB enough?": a memory asked about on its own
    (
        r"()(?<![\d.])(\d+(?:\.\d+)?)\s*(?:g|gb|gib)\s*(?:显存|vram)?\s*(?=够|足够|能不能|可以|enough|suffic)",
        False,
        False,
    ),
)


# a length in a prompt/output split: digits, a "k" of 1,024 ("1k/1k", "ISL 1k"), no letter after
_SPLIT_LENGTH = r"(\d+(?:\.\d+)?\s*k?)(?![\d.]|[a-jl-z])"
_SPLIT_JOIN = r"\s*(?:tokens?|token)?\s*[,，;；/、]?\s*(?:and\s+|和|,)?\s*"
_LABEL_VALUE = r"\s*(?:length|len)?\s*(?:of|=|:|is|are|为|是|：)?\s*(?:about\s*|around\s*|~)?"


@functools.cache
def _split_patterns(prompt_words: str, output_words: str, serving: bool) -> tuple[str, ...]:
    """The prompt-and-output patterns: labels before the lengths ("input 2048 output 128"), after
    them ("2048 input / 128 output tokens"), a labelled ratio ("ISL/OSL 1000/1000") and, in a serving
    question, a bare ratio of lengths in k ("1k/1k")."""
    p, o = (rf"(?<![a-z])(?:{w})" for w in (prompt_words, output_words))
    n = _SPLIT_LENGTH
    found = (
        p + _LABEL_VALUE + n + _SPLIT_JOIN + o + _LABEL_VALUE + n,
        n + r"\s*(?:tokens?\s*)?" + p + _SPLIT_JOIN + n + r"\s*(?:tokens?\s*)?" + o,
        p + r"\s*/\s*" + o + _LABEL_VALUE + n + r"\s*/\s*" + n,
    )
    bare = r"(?<![\w./$])(\d+(?:\.\d+)?\s*k)\s*/\s*(\d+(?:\.\d+)?\s*k)(?![\w./])"
    return found + ((bare,) if serving else ())


@functools.cache
def _prompt_patterns(prompt_words: str) -> tuple[str, ...]:
    """A prompt's length said alone: "5000-token prompts", "5k token input", "prompts of 5000 tokens",
    "输入5000 token"."""
    p = rf"(?<![a-z])(?:{prompt_words})"
    return (
        _SPLIT_LENGTH + r"\s*[- ]?\s*(?:tokens?|token)[- ]?\s*(?:long\s+)?(?:of\s+)?" + p,
        p + _LABEL_VALUE + _SPLIT_LENGTH + r"\s*(?:tokens?|token)?",
    )


class Reader:
    """Runs the extractors over one question and collects fields, notes and errors."""

    # The extractors, in the order they run: each reads one kind of thing and blanks its words,
    # so what one takes ("8x A100") is not read again by a later one ("8" as a count).
    STEPS = (
        "unsupported_hardware",
        "read_gpu_names",
        "unknown_gpu_names",
        "fabric",
        "frameworks",
        "read_model_names",
        "prompt_and_response",
        "served_split",
        "tokens",
        "dataset",
        "sequence",
        "gpu_memory",
        "counts",
        "per_node_counts",
        "machines_asked",
        "read_sizes",
        "concurrency",
        "batches",
        "schedule",
        "budget",
        "training_options",
    )

    def __init__(self, text: str, cat: Catalog):
        self.scan = Scan(text)
        self.cat = cat
        self.voc = vocabulary()
        self.fields: dict[str, Any] = {}
        self.words: dict[str, str] = {}  # field -> the words it was read from (to name them later)
        self.spans: dict[str, tuple[int, int]] = {}  # field -> where those words stand
        self.weak_fields: dict[str, tuple[Any, str]] = {}
        self.users_read: tuple[int, str] | None = None  # "for 32 users": concurrency if this is serving
        self.option_spans: dict[str, list[tuple[int, int]]] = {"gpu": [], "model": [], "method": []}
        self.mentions: dict[tuple[str, Any], int] = {}  # ("model", id) or ("params_b", size) -> weight
        self.notes: list[Note] = []
        self.unknown: list[str] = []  # words gpuplan did not understand
        self.set_aside: list[Note] = []  # second readings of a field that were not used
        self.methods_named: list[str] = []
        self._method_spans: list[tuple[int, int]] = []  # every method word's place, negated or not
        self.adapter_negated = ""  # "非lora", "without LoRA": the words, when adapters are ruled out
        self.code_names: dict[str, list[str]] = {}
        self._links: list[tuple[int, int]] | None = None  # where the text holds URLs
        self.contradiction: Note | None = None
        self.gpu_ids: list[str] = []  # GPU types named, in order (instances first)
        self.said_less_exactly: set[str] = set()  # a bare type's default card, named with its memory too
        self.method_weak = False  # the method read from a weak training word only ("train a 2B")
        self.memory_written_with: set[str] = set()  # GPU types named with their memory beside them
        self.mixed_types: list[str] = []  # types the user has together ("一台A100 服务器 和 一台 A800 服务器")
        # GPU and node counts by ("gpus" | "nodes" | "weak", the span of the GPU name read with them)
        self.counts_at: dict[tuple[str, tuple[int, int]], int] = {}
        self.gpu_mentions: list[tuple[str, tuple[int, int], int | None, int | None]] = []  # id, span, GPUs, nodes
        self.gpus_lacked: set[str] = set()  # GPU types the user says they lack: no option to compare
        self.gpu_counts: dict[str, int] = {}  # GPU type -> the count first written with it ("2x 3090 vs 1x 4090")
        self.model_ids: list[str] = []  # catalog models named, in order
        self.size_readings: list[tuple[float, str]] = []  # sizes written alone: (billions, words)
        self.model_words: dict[str, str] = {}  # catalog model -> the words that first named it

    # steps that read no numbers inside a link: a URL's "two-h208-nodes" anchor is no 208 nodes
    BLIND_TO_LINKS = ("counts", "per_node_counts")

    def read(self) -> None:
        for step in self.STEPS:
            if step in self.BLIND_TO_LINKS:
                with self._links_hidden():
                    getattr(self, step)()
            else:
                getattr(self, step)()

    @contextlib.contextmanager
    def _links_hidden(self) -> Iterator[None]:
        """The links' text blanked while a step runs, then put back as it was (the step cannot have
        taken anything from blanks, so what it blanked elsewhere stays)."""
        spans = self._link_spans()
        kept = [self.scan.text[a:b] for a, b in spans]
        for a, b in spans:
            self.scan.blank(a, b)
        try:
            yield
        finally:
            for (a, b), text in zip(spans, kept, strict=True):
                self.scan.text = self.scan.text[:a] + text + self.scan.text[b:]

    def read_gpu_names(self) -> None:
        self.gpu_ids = self.instances()
        self.gpu_ids += [g for g in self.gpus() if g not in self.gpu_ids]
        self.gpu_ids = [g for g in self.gpu_ids if g not in self.said_less_exactly] or self.gpu_ids
        self.mixed_cluster()

    def mixed_cluster(self) -> None:
        """Cards of different types the user has together ("一台40G A100 服务器 和 一台 80G A800 服务器",
        "1张RTX5000ADA 32G+1张V100 32G", "a 3090 and a 4090"): all of them, planned as the type with
        the least memory (sharded work is bound by the smallest card), and said so."""

        text = self.scan.original
        group = _joined_mentions(text, self.gpu_mentions)
        if len(group) < 2 or hits("choice", text, most=1):
            return  # types weighed against each other ("8张A100 和 8张H100 哪个快")
        added = all(_PLUS.search(text, a[1][1], b[1][0]) for a, b in zip(group, group[1:], strict=False))
        if not (added or all(owner(text, span) >= 1 for _, span, _, _ in group)):
            return  # "70b full on 8 H100 and 16 A100": either, unless "+" or the user's own ("I have")
        types = list(dict.fromkeys(g for g, _, _, _ in group))
        self.mixed_types = types
        smallest = min(types, key=lambda g: self.cat.gpus[g].memory_gib)
        total = sum(count for _, _, count, _ in group)
        nodes = [n for _, _, _, n in group if n]
        self.fields.update(gpu=smallest, gpus=total)
        self.words["gpu"] = self.words["gpus"] = " + ".join(self.scan.original[a:b] for _, (a, b), _, _ in group)
        if nodes:
            self.fields["nodes"] = sum(nodes) if len(nodes) == len(group) else max(nodes)
        self.set_aside = [n for n in self.set_aside if n.params["field"] not in ("gpu", "gpus", "nodes")]
        names = [self.cat.gpus[g].name for g in types]
        planned = self.cat.gpus[smallest].name
        self.notes.append(Note(code="mixed_gpus", params={"gpus": names, "total": total, "planned": planned}))

    def unknown_gpu_names(self) -> None:
        """A GPU name the catalog lacks ("Dedicated GPU: NVIDIA T500"), when no catalog GPU was
        read: said back as not sized, instead of planning the default GPU without a word."""
        if self.gpu_ids:
            return
        for match in self.scan.finditer(self.voc.gpu_like):
            words = self.scan.take(match)
            memory, span, _ = self._gpu_memory_near(match, None)
            named = gpu_id(f"{words} {memory:g}g", self.voc, self.cat) if memory else None
            if named:  # "16GB VRAM 5060 TI": a card the catalog names only with its memory
                self.scan.blank(*span)
                self.set("gpu", named, words)
                self.gpu_ids.append(named)
                self._cards_counted_before(match.start(), words)
                continue
            if not memory and self._catalog_has_with_memory(words):
                continue  # "5060 Ti" alone: the catalog has it, of a memory the question does not say
            self.unknown.append(words)
            if memory and "gpu_memory_gib" not in self.fields:  # "Mi50 16GB": planned as a card of that memory
                self.set("gpu_memory_gib", memory, words)
                self.scan.blank(*span)
                self._cards_counted_before(match.start(), words)  # "2张 RTX 2060 6g"
            else:
                memory = None
            self.notes.append(Note(code="unsupported_hardware", params={"value": words, "memory": memory}))

    def _catalog_has_with_memory(self, words: str) -> bool:
        """Whether a catalog card's name is these words and a memory ("5060 ti": the 5060 Ti 16GB)."""
        key = re.escape(re.sub(r"^(?:rtx|gtx)", "", normalize_name(words)))
        names = (normalize_name(g.name) for g in self.cat.gpus.values())
        return any(re.fullmatch(r"(?:rtx|gtx)?" + key + r"\d+g", name) for name in names)

    def _cards_counted_before(self, start: int, words: str) -> None:
        counted, count = self._count_before(_CARDS_JOINER, start)
        if counted and "gpus" not in self.fields:
            self.set("gpus", count, counted.group(0).strip() + " " + words)
            self.scan.blank(*counted.span())

    def read_model_names(self) -> None:
        self.model_ids = self.models()
        self.model_ids += [m for m in self.family_models() if m not in self.model_ids]

    def read_sizes(self) -> None:
        self.active_size()
        self.size_readings = self.sizes()
        self.unknown_models(self.size_readings)

    def active_size(self) -> None:
        """The parameters a Mixture-of-Experts model activates per token ("32B active", "激活32B",
        "235B-A22B"): a size of its own, not a second model's."""
        for match in self.scan.finditer(_ACTIVE_SIZE):
            number = next(g for g in match.groups() if g)
            self.set("active_params_b", float(number), self.scan.take(match))

    def set(self, name: str, value: Any, words: str) -> bool:
        """Record a reading. Of two different readings of one field the first written stands,
        unless the other is the target of "from X to Y" or the user's own setup against one they
        quote ("the paper used 8 A100, I have 4"); the one not used is named back. True when this
        reading is the field's value now."""
        span = self.scan.last_span
        if self._no_reading(name, value, words, span):
            return False
        if name not in self.fields:
            self.fields[name], self.words[name], self.spans[name] = value, words, span
            return True
        if self.fields[name] == value:  # said again: where the user's own setup says it counts most
            text = self.scan.original
            if name in ("gpu", "gpus") and owner(text, span) > owner(text, self.spans[name]):
                self.words[name], self.spans[name] = words, span
            return True
        old = (self.spans[name], self.fields[name], self.words[name])
        new = (span, value, words)
        first, second = sorted([old, new], key=lambda r: r[0])
        keep = second if self._later_wins(name, first, second) else first
        other = second if keep is first else first
        self.fields[name], self.words[name], self.spans[name] = keep[1], keep[2], keep[0]
        if name == "gpu" and _refines(keep, other):  # the same card said twice is nothing set aside,
            self.said_less_exactly.add(other[1])  # nor two cards to weigh ("on A100 ... GPU: A100 40GB")
        else:
            self.set_aside.append(Note(code="set_aside", params={"field": name, "used": keep[2], "other": other[2]}))
        if name == "gpu" and keep is new:
            self._drop_counts_read_at(old[0])  # "needs 8xH100 ..., on a single 4090": the 8 went with the H100
        return keep is new

    def _no_reading(self, name: str, value: Any, words: str, span: tuple[int, int]) -> bool:
        """A number that is no reading of the field: "0 GPUs", a pasted counter, a baseline's count."""
        if name in ("gpus", "nodes") and not 0 < value <= 200_000:
            return True  # "0 GPUs" or an unreadable count is not a count
        if name in ("gpus", "nodes"):
            self.counts_at.setdefault((name, span), value)  # a comparison's options keep their own counts
        if isinstance(value, int | float) and not abs(value) < MAX_READ_NUMBER:
            return True  # fifteen digits and more: a pasted counter or a hash, not a figure anyone means
        if name in ("gpus", "nodes") and _BASELINE.search(self.scan.original[max(0, span[0] - 16) : span[0]]):
            self.notes.append(Note(code="baseline_count", params={"words": words}))
            return True  # "4x slower than 1 node": the setup compared against, not the user's own
        return False

    def _later_wins(self, name: str, first: tuple, second: tuple) -> bool:
        """Of two readings (span, value, words) in text order, whether the later one is the field's."""
        text = self.scan.original
        return bool(
            moves_to(text, first[0], second[0])
            or owner(text, second[0]) > owner(text, first[0])
            or (_bounded(text, first) and not _bounded(text, second))  # "9 or more H100s ... I have 2x8"
            or (name in ("gpus", "nodes") and _totalled(text, second) and not _totalled(text, first))  # a total
            or (name == "gpu" and _refines(second, first))  # "v100 ... Gpu: Nvidia v100 16GB"
            # "One H100 will oom ... How to use two H100 to train llama2-70b?": the setup asked about
            or (name in ("gpus", "nodes") and _asked_over(text, second[0], first[0]))
        )

    def _counts_now(self) -> tuple[dict[str, tuple], int]:
        """The GPU and node readings as they stand, and how many set-aside notes there are."""
        table = (self.fields, self.words, self.spans)
        return {name: tuple(t.get(name) for t in table) for name in ("gpus", "nodes")}, len(self.set_aside)

    def _restore_counts(self, before: tuple[dict[str, tuple], int]) -> None:
        """The GPU and node readings back as `_counts_now` saw them, the notes made since dropped."""
        readings, notes = before
        for name, saved in readings.items():
            for table, value in zip((self.fields, self.words, self.spans), saved, strict=True):
                if value is None:
                    table.pop(name, None)
                else:
                    table[name] = value
        self.set_aside[notes:] = [n for n in self.set_aside[notes:] if n.params["field"] not in readings]

    def _remember_mention(self, gpu: str, span: tuple[int, int], start: int) -> None:
        """What one GPU mention came with, for comparisons and mixed setups: its counts, and whether
        the user lacks it."""
        here = self.counts_at.get(("gpus", span)) or self.counts_at.get(("weak", span))
        if here:
            self.gpu_counts.setdefault(gpu, here)
        self.gpu_mentions.append((gpu, (start, span[1]), here, self.counts_at.get(("nodes", span))))
        if lacked(self.scan.original, span):
            self.gpus_lacked.add(gpu)

    def _drop_counts_read_at(self, span: tuple[int, int]) -> None:
        """Forget the GPU and node counts written with the GPU name at `span`, now set aside."""
        for name in ("gpus", "nodes"):
            if self.spans.get(name) == span:
                del self.fields[name], self.words[name], self.spans[name]

    def weak(self, name: str, value: Any, words: str) -> None:
        """A reading that stands only when nothing else reads the field ("my 4090": one card)."""
        self.weak_fields.setdefault(name, (value, words))
        if name == "gpus":
            self.counts_at.setdefault(("weak", self.scan.last_span), value)

    def settle_weak(self) -> None:
        """Weak readings where nothing else read the field; a desktop card named without a count
        ("4090能跑吗", "can a 3090 fine-tune it") is one card, unless the question asks how many."""
        gpu = self.cat.gpus.get(self.fields.get("gpu", ""))
        if (
            gpu
            and "gpus" not in self.fields
            and _DESKTOP.search(gpu.name)
            and not self.voc.asks_count.search(self.scan.text)
        ):
            self.weak("gpus", 1, self.words.get("gpu", gpu.name))
            self.notes.append(Note(code="one_card_assumed", params={"gpu": gpu.name}))
        memory = self.fields.get("gpu_memory_gib")
        if memory and not gpu and "gpus" not in self.fields and not self._many_cards():
            self.weak("gpus", 1, self.words["gpu_memory_gib"])  # "24G显存能lora qwen 7b吗": the card one has
            self.notes.append(Note(code="one_card_of_memory_assumed", params={"gib": memory}))
        for name, (value, words) in self.weak_fields.items():
            if name not in self.fields:
                self.fields[name], self.words[name] = value, words

    def _many_cards(self) -> bool:
        """Whether the question asks how many cards, or speaks of cards in the plural ("24GB GPUs")."""
        return bool(self.voc.asks_count.search(self.scan.text) or _CARDS_PLURAL.search(self.scan.original))

    def conflict(self, name: str, first: str, second: str) -> None:
        """Two things named where one was expected: the first is used, the second set aside."""
        self.set_aside.append(Note(code="set_aside", params={"field": name, "used": first, "other": second}))

    def mention(self, key: tuple[str, Any], span: tuple[int, int], counts: bool = True) -> None:
        """One more mention of a model or size; one in a question sentence weighs double, one in a
        clause quoting another setup or an earlier one ("原来用1张A100训练7b") and a bare family name
        ("Llama-2", no size) weigh nothing."""
        text = self.scan.original
        # a size inside a link is a script's or a repository's name ("ds_pretrain_gpt_1.3B.sh"), not the
        # run's; a model a link names (a Hugging Face URL) still counts
        in_link = key[0] == "params_b" and any(a <= span[0] < b for a, b in self._link_spans())
        weight = (2 if _in_question(text, span) else 1) if counts and owner(text, span) >= 0 and not in_link else 0
        self.mentions[key] = self.mentions.get(key, 0) + weight

    def _link_spans(self) -> list[tuple[int, int]]:
        if self._links is None:
            self._links = [m.span() for m in _LINK.finditer(self.scan.original)]
        return self._links

    # each extractor reads one kind of thing and blanks it -----------------------------------
    def unsupported_hardware(self) -> None:
        for match in self.scan.finditer(self.voc.unsupported):
            words = self.scan.take(match)
            self.notes.append(Note(code="unsupported_hardware", params={"value": words, "memory": None}))
            self.unknown.append(words)

    def instances(self) -> list[str]:
        """Cloud instance types ("ml.g5.48xlarge", "2 x p4d.24xlarge", "a2-highgpu-8g", "colab"):
        their GPU type and count, said back in a note."""
        found: list[str] = []
        if not self.voc.any_instance.search(self.scan.text):
            return found
        for instance, pattern in self.voc.instances:
            for match in self.scan.finditer(pattern):
                per = int(match.group(1)) if instance.gpus == "count" else instance.gpus
                count = self._count_before(_INSTANCES_JOINER, match.start())[1] or 1
                words = self.scan.take(match)
                self.set("gpu", instance.gpu, words)
                self.set("gpus", per * count, words)
                if count > 1:
                    self.set("nodes", count, words)
                self.notes.append(
                    Note(code="instance_read", params={"instance": words, "gpu": instance.gpu, "gpus": per * count})
                )
                found.append(instance.gpu)
        return found

    def gpus(self) -> list[str]:
        """GPU types named, with the count and memory written around each: "8张H100", "8x A100",
        "4张40G的A100", "A100 (40G)", "TITAN RTX 24GB *2", "3*8*A100", "2台8卡A800", "my dual 3090"."""
        found: list[str] = []
        for match in self.scan.finditer(self.voc.gpu_alias):
            found_id = gpu_id(match.group(1), self.voc, self.cat)
            if found_id is None or (match.group(1).isdigit() and _QUANTITY_AFTER.match(self.scan.text, match.end())):
                continue  # "3090 steps", "1650条样本": a number of things, not a card
            vendor = VENDOR_BEFORE.search(self.scan.text, max(0, match.start() - 24), match.start())
            start = vendor.start() if vendor else match.start()  # "nvidia a100": the vendor's name too
            server = bool(vendor and vendor.group("server"))  # "96 DGX-A100": servers, not GPUs
            words = self.scan.text[start : match.end()].strip()
            memory, memory_span, inner_count = self._gpu_memory_near(match, found_id)
            written_with = bool(memory or _MEMORY_SIZE.search(match.group(0)))  # "4台H100（80GB）", "3060 12gb"
            total = None  # "4xA100 160Gb": the memory of all the cards, told apart once the count is read
            as_written = None  # a card with other memory than the catalog's ("4090 48G"), once it is the one used
            if memory:
                variant = variant_with_memory(found_id, memory, self.cat)
                found_id = variant or found_id
                card = self.cat.gpus[found_id]
                said_total = _TOTAL_AFTER.match(self.scan.text, memory_span[1])  # "2x 3090 (48GB total)"
                if not variant and memory > 1.15 * card.memory_gib and (said_total or not _DESKTOP.search(card.name)):
                    total = memory  # not on desktop cards unless said, their memory is modded ("4090 48G")
                elif abs(self.cat.gpus[found_id].memory_gib - memory) > 0.15 * memory:
                    as_written = memory
            if written_with:  # the card its memory names ("A100(40G)": the 40 GB A100), whose memory no
                self.memory_written_with.add(found_id)  # memory written apart from it is
            form = _FORM_AFTER.search(self.scan.text[match.end() : match.end() + 16])
            if form:  # "A800单机8卡PCIE": the form factor written after the count
                variant = variant_with_form(found_id, form.group(1).rstrip("0123456789"), self.cat)
                if variant:
                    found_id = variant
                    self.scan.blank(match.end() + form.start(1), match.end() + form.end(1))
            self.scan.take(match)
            self.scan.blank(start, match.start())
            self.option_spans["gpu"].append((start, match.end()))
            kept = self.set("gpu", found_id, words)
            if as_written and self.fields.get("gpu") == found_id:  # not a card compared or set aside
                self.set("gpu_memory_gib", as_written, words)
            if memory_span:
                self.scan.blank(*memory_span)
            before = self._counts_now()
            if server:
                self._dgx_servers(start, words, found_id)
            else:
                self._gpu_count(start, match.end(), words, memory_span, found_id)
                self._count_in_memory(inner_count, memory_span, before, words)
            if not kept:  # the counts written with a GPU set aside are set aside with it
                self._restore_counts(before)
            self._remember_mention(found_id, match.span(), start)
            if total:
                said = self.scan.original[start : max(match.end(), memory_span[1])].strip()  # "a100 160gb"
                found_id = self._memory_in_all(found_id, total, said)
            if found_id not in found:
                found.append(found_id)
        return found

    # "A100 (40G)", "4090-24G", "V100 * 32G", "A100/40GB", "RTX4090 24Gx2张" (an x after the unit is the count's);
    # "A10(4* 24GB)", "A100 (8*80G)": the count times the memory after the name
    _MEMORY_AFTER = (
        r"^\s*(?:gpus?|cards?)?\s*(?:[-(（,，=*×/]|with|w/)?\s*(?:(\d{1,2})\s*[x×*]\s*)?(\d{1,3}(?:\.\d)?)\s*(?:g|gb|gib)(?![a-wyz])"
        # the host's RAM written after the card is not the card's ("1650显卡 40G内存", "4090, 64GB RAM")
        r"(?!\s*(?:内存|ram\b|ddr|system memory|cpu memory|host memory))"
        r"\s*(?:显存|vram|memory)?\s*[)）]?"
    )
    _MEMORY_BEFORE = (
        r"(\d{1,3}(?:\.\d)?)\s*(?:g|gb|gib)\s*(?:的|显存的?|vram)?\s*(?:nvidia\s*|英伟达\s*|geforce\s*|tesla\s*)?$"
    )

    def _count_in_memory(self, count: int | None, memory_span, before, words: str) -> None:
        """'A10(4* 24GB)': a count times the memory written after the name is the count, when
        nothing before the name counted the cards."""
        if count and self._counts_now()[0]["gpus"] == before[0]["gpus"]:
            said = self.scan.original[memory_span[0] : memory_span[1]].strip()
            self.set("gpus", count, words + " " + said)

    # a number without its unit between a count and the name ("三张24 3090"), one of the card's memories
    _BARE_MEMORY_BEFORE = r"(?:张|块|个|[x×*])\s*(\d{2,3})\s+$"

    def _gpu_memory_near(
        self, match: re.Match, found_id: str | None
    ) -> tuple[float | None, tuple[int, int] | None, int | None]:
        """The memory written right after ("A100 (40G)", "4090-24G") or before ("40G的A100", "三张24
        3090") a GPU name, its span, and a count written times it after the name ("A10(4* 24GB)")."""
        tail = self.scan.text[match.end() : match.end() + 16]
        form = _FORM_FIRST.match(tail)  # "A800-SXM4-40GB": the form factor between name and memory
        tail = " " * form.end() + tail[form.end() :] if form else tail
        after = _rx(self._MEMORY_AFTER).search(tail)
        if after:
            count = int(after.group(1)) if after.group(1) and int(after.group(1)) >= 1 else None
            return float(after.group(2)), (match.end() + after.start(), match.end() + after.end()), count
        head = self.scan.text[max(0, match.start() - 14) : match.start()]
        before = _rx(self._MEMORY_BEFORE).search(head)
        if before:
            offset = match.start() - len(head)
            return float(before.group(1)), (offset + before.start(), offset + before.end()), None
        bare = _rx(self._BARE_MEMORY_BEFORE).search(head)
        if bare and found_id and variant_with_memory(found_id, float(bare.group(1)), self.cat):
            offset = match.start() - len(head)
            return float(bare.group(1)), (offset + bare.start(1), offset + bare.end(1)), None
        return None, None, None

    def _gpu_count(self, start: int, end: int, words: str, memory_span: tuple[int, int] | None, gpu: str) -> None:
        """The count written before the GPU name (or after it: "24GB *2"), with nodes when given."""
        head_end = memory_span[0] if memory_span and memory_span[0] < start else start
        head = (self.scan.text, max(0, head_end - COUNT_WINDOW), head_end)  # text, pos, endpos
        tail_start = memory_span[1] if memory_span and memory_span[1] > end else end
        # 3*8*A100, 三个8*V100, 12x8卡H20
        product = _rx(NUM + r"\s*(?:[*x×]|个|台|组)\s*" + NUM + r"\s*(?:[*x×]|卡|张)?\s*$").search(*head)
        if not product and _MACHINES_AFTER.match(self.scan.text, tail_start):  # "two 8 A100 servers"
            product = _rx(NUM + r"\s+" + NUM + r"\s*$").search(*head)
        nodes_of = _rx(
            NUM
            + r"\s*(台|机器?|nodes?|servers?|machines?|boxes)\s*(?:of|x|×|with)?\s*"
            + NUM
            + r"\s*(?:x|×|张|块)?\s*$"
        ).search(*head)
        # "8x H100", "8张", "8*(v100 16G)": a bracket may open after a multiplier
        before = _rx(NUM + r"\s*(?:or (?:fewer|less|more)\s*)?(?:[x×*]\s*[(（]|x|×|\*|张|块|台|个|-way)?\s*$").search(
            *head
        )
        before = before or _GPU_WORD_COUNT.search(*head) or _rx(NUM + _COUNT_THEN_DESCRIBED).search(*head)
        after = _rx(r"^\s*(?:gpus?|cards?)?\s*[*x×]\s*(\d{1,5})(?![\d.])").search(self.scan.text[tail_start:])
        counted_after = None if after else _COUNT_AFTER_ZH.match(self.scan.text, tail_start)  # "4090 24G 4张"
        if product or nodes_of:  # "3*8*A100", "two nodes of 8 H100", "2台8卡H100"
            m = product or nodes_of
            nodes, count = count_value(m.group(1)), count_value(m.group(3) if nodes_of and not product else m.group(2))
            total = count if nodes_of and not product and m.group(2).startswith("机") else nodes * count
            self.set("nodes", int(nodes), m.group(0).strip() + " " + words)
            self.set("gpus", int(total), m.group(0).strip() + " " + words)
            self.scan.blank(*m.span())
        elif (
            before
            and after
            and before.group(1) not in ("a", "an")
            and ("台" in before.group(0) or _MACHINES_AFTER.match(self.scan.text, tail_start + after.end()))
        ):  # "2 H100*8 machines", "2台 H100*8": two servers of eight
            servers = count_value(before.group(1))
            if servers and servers == int(servers):
                said = before.group(0).strip() + " " + words + after.group(0)
                self.set("nodes", int(servers), said)
                self.set("gpus", int(servers) * int(after.group(1)), said)
                self.scan.blank(*before.span())
                self.scan.blank(tail_start + after.start(), tail_start + after.end())
        elif (
            before
            and before.group(1) not in ("a", "an")
            and not re.search(r"[x×*张块]|gpu", before.group(0))  # "4xA100 server", "8 GPU A100 server": GPUs
            # "2台H100": 台 counts machines, and an NVLink card comes in servers ("两台4090" may be two cards)
            and (
                _MACHINES_AFTER.match(self.scan.text, tail_start)
                or (
                    "台" in before.group(0)
                    and self._sold_in_servers(gpu)
                    and not _CARDS_AFTER.match(self.scan.text, tail_start)
                )
            )
        ):
            self._servers(count_value(before.group(1)), before.group(0).strip() + " " + words, gpu)
            self.scan.blank(*before.span())
        elif before and before.group(1) not in ("a", "an"):
            count = count_value(before.group(1))
            if count and count == int(count):
                self.set("gpus", int(count), before.group(0).strip() + " " + words)
                self.scan.blank(*before.span())
        elif after:
            self.set("gpus", int(after.group(1)), words + after.group(0))
            self.scan.blank(tail_start + after.start(), tail_start + after.end())
        elif counted_after:
            self.set("gpus", int(counted_after.group(1)), words + counted_after.group(0))
            self.scan.blank(*counted_after.span())
        elif thousands := _rx(_THOUSANDS_BEFORE).search(*head):  # "on 16k H100": a cluster's count
            self.set("gpus", int(float(thousands.group(1)) * 1000), thousands.group(0).strip() + " " + words)
            self.scan.blank(thousands.start(1), thousands.end())
        elif _rx(r"(?:\b(?:one|single)\s+|(?:单张|一张|一块|单卡)\s*)$").search(*head):
            self.set("gpus", 1, words)  # "on a single A6000": one card, said as such
        elif (
            _rx(r"\b(?:a|an|my|this)\s+$").search(*head)
            or _rx(
                r"^\s*(?:显卡|卡(?![\d数])|graphics card\b|card\b|gpu\b(?!\s*\d+\s*:))"  # not "GPU 1: ..." of a list
            ).search(self.scan.text[tail_start:])
        ):
            self.weak("gpus", 1, words)  # "my 4090", "titanxp显卡": one card unless a count is written

    def _sold_in_servers(self, gpu: str) -> bool:
        """A Hopper or Blackwell SXM module, which comes only in servers: "4台H100", "4台H800" count
        servers in the labelled questions (3 of 3), while "8台V100 * 32G", "四台V100，一共128G" and
        "一台v100" count cards (train/questions/zh.yaml)."""
        card = self.cat.gpus.get(gpu)
        return bool(card and card.link == "nvlink" and card.family in ("hopper", "blackwell"))

    def _memory_in_all(self, gpu: str, total: float, words: str) -> str:
        """A memory larger than the card's, written beside a count ("4xA100 160Gb"): the memory of
        all of them when it divides into a variant of the card (said back), else the card's own."""
        count = self.fields.get("gpus")
        each = variant_with_memory(gpu, total / count, self.cat) if count else None
        if each:
            self.fields["gpu"] = each
            self.notes.append(Note(code="memory_of_all", params={"words": words, "gib": total / count}))
            return each
        self.set("gpu_memory_gib", total, words)
        return gpu

    def _dgx_servers(self, start: int, words: str, gpu: str) -> None:
        """ "96 NVIDIA DGX-A100 (8x40G) machines": a count before a DGX/HGX name counts servers."""
        count, servers = self._count_before(_SERVERS_JOINER, start)
        if count:
            self.scan.blank(*count.span())
        self._servers(servers or 1, (count.group(0).strip() + " " if count else "") + words, gpu)

    def _count_before(self, joiner: str, start: int) -> tuple[re.Match | None, int]:
        """The whole count written just before `start` ("8张", "two", "4x"; `joiner` the words that
        may join it to what it counts) and its value; (None, 0) when there is none ("a" is no count)."""
        match = _rx(NUM + r"\s*" + joiner + r"\s*$").search(self.scan.text, max(0, start - COUNT_WINDOW), start)
        value = count_value(match.group(1)) if match and match.group(1) not in ("a", "an") else 0
        return (match, int(value)) if value and value == int(value) else (None, 0)

    def _servers(self, servers: float, words: str, gpu: str) -> None:
        """ "4台 A800 机器", "two H100 servers": that many servers, each the type's usual number of
        GPUs (the answer says so) unless the question gives it."""
        if not servers or servers != int(servers):
            return
        self.set("nodes", int(servers), words)
        per_node = self.cat.gpus[gpu].gpus_per_node
        self.weak("gpus", int(servers) * per_node, words)
        note = Note(
            code="servers_of_usual_size",
            params={"servers": int(servers), "per_node": per_node, "gpu": self.cat.gpus[gpu].name},
        )
        if note not in self.notes:  # said once (the parser drops it for a card set aside)
            self.notes.append(note)

    def models(self) -> list[str]:
        found: list[str] = []
        for match in self.scan.finditer(self.voc.model_alias):
            found_id = model_id(match.group(1), self.cat)
            if found_id and other_size_follows(self.scan.text, match.end(), found_id, self.cat):
                continue  # "BLOOM 1.1B": the family named, not the catalog's BLOOM 176B
            if not found_id:
                continue
            org = ORG_BEFORE.search(self.scan.text, max(0, match.start() - 12), match.start())
            span = (org.start() if org else match.start(), match.end())  # "meta-llama/llama-3-8b" whole
            self.option_spans["model"].append(span)
            self.mention(("model", found_id), span, bool(_SIZED.search(match.group(1))))
            words = self.scan.take(match)
            self.scan.blank(span[0], match.start())
            if _QUANTISED_NAME.search(match.group(0), len(match.group(1))):
                self.set("precision_word", "int4", words)  # "qwen2.5-72b-awq": a 4-bit checkpoint
            if found_id not in found:
                found.append(found_id)
                self.model_words.setdefault(found_id, words)
        return found

    def names_in(self, code: str) -> dict[str, list[str]]:
        """GPU types and catalog models named inside pasted artifacts (names only: in a log,
        "GPU 0" counts nothing)."""
        lowered = code.lower()
        gpus, counted, written = [], [], {}
        for m in self.voc.gpu_alias.finditer(lowered):
            gpus.append(gpu_id(m.group(1), self.voc, self.cat))
            written.setdefault(gpus[-1], code[m.start(1) : m.end(1)])  # the name as the paste spells it
            line_start = lowered.rfind("\n", 0, m.start()) + 1
            if gpus[-1] and (count := _LABELLED_COUNT.search(lowered, line_start, m.start())):
                # "GPU: 1x3090" in an environment list: the card, the count, the words as written
                counted.append((gpus[-1], int(count.group(1)), code[count.start() : m.end()].strip()))
        models = [named_here(m, lowered, self.cat) for m in self.voc.model_alias.finditer(lowered)]
        instances = [
            (instance.gpu, int(m.group(1)) if instance.gpus == "count" else instance.gpus)
            for instance, pattern in self.voc.instances
            for m in pattern.finditer(lowered)
        ]
        scripts, methods = [], []
        for match in _SCRIPT_FILE.finditer(lowered):  # "examples/train_lora/llama3_lora_sft.yaml"
            # serving is read from the launcher line itself
            named = [m for w in re.split(r"[_\-./]", match.group(0)) if w and (m := method_word(w)) and m != "infer"]
            scripts += [match.group(0).rsplit("/", 1)[-1]] if named else []
            methods += named
        return {
            "gpu": list(dict.fromkeys(g for g in gpus if g)),
            "model": list(dict.fromkeys(m for m in models if m)),
            "instance": instances[:1],
            "gpu_count": counted[:1],
            "gpu_written": [written[g] for g in dict.fromkeys(g for g in gpus if g)],
            "method": list(dict.fromkeys(methods)),
            "script": scripts,
        }

    def hub_id(self, prose: str) -> str | None:
        """A Hugging Face id (`org/name`) written in the prose that the catalog does not know."""
        written = [match.group(0) for match in _REPO_ID.finditer(prose)]
        if not written:
            return None

        return next((name for name in written if looks_like_repo_id(name) and not self.cat.find_model(name)), None)

    def family_models(self) -> list[str]:
        """A family and a size the catalog has ("qwen 14b" -> a Qwen of 14B): that catalog model.
        A bare number is a size from 6 up ("Yi-34", "mistral 7") and a version below ("llama 3")."""
        found: list[str] = []
        for match in self.scan.finditer(self.voc.family_size):
            number, unit = float(match.group(3)), (match.group(4) or "").lower()
            if not unit and number < 6:
                continue
            size = number / 1000 if unit == "m" else number / 10 if unit == "亿" else number
            prefixes = self.voc.family_ids.get(match.group(1).lower(), ())
            spec = family_model(prefixes, size, match.group(2), self.cat)
            if not spec and not unit and number >= 100:  # "mpt125", "pythia-410": millions when no B fits
                size = number / 1000
                spec = family_model(prefixes, size, match.group(2), self.cat)
            if spec and abs(self.cat.models[spec].params_b - size) > 0.05 * size:
                self.notes.append(Note(code="model_read_as", params={"value": match.group(0).strip(), "model": spec}))
            if spec:
                self.mention(("model", spec), match.span())
            if spec and spec not in found:
                found.append(spec)
                self.option_spans["model"].append(match.span())
                self.model_words.setdefault(spec, self.scan.take(match))
        return found

    def unknown_models(self, sizes: list[tuple[float, str]]) -> None:
        """Family names that are not in the catalog: suggestions, and their size when written."""
        for match in self.scan.finditer(self.voc.family):
            name = match.group(0).strip("-_. ")
            size = _size_in_name(name)
            after = None if size else _SIZE_AFTER_NAME.match(self.scan.text, match.end())
            if len(name) < 3 or (name in ("gpt", "glm", "opt") and not re.search(r"\d", name) and not after):
                continue  # a bare family word names no model
            self.scan.take(match)
            if after:  # "pythia 410m": the size written after the name is the model's
                size = _size_in_name(after.group(1))
                self.scan.take(after)
            if any(
                n.code in ("unknown_model_name", "model_family_sizes") and n.params["value"] == name for n in self.notes
            ):
                continue
            family = None if size else family_sizes(name, self.scan.original[match.end() :], self.cat)
            if family:
                self.notes.append(Note(code="model_family_sizes", params={"value": family[0], "models": family[1]}))
                continue
            self.notes.append(
                Note(
                    code="unknown_model_name",
                    params={
                        "value": name,
                        "suggestions": suggest_models(name, self.cat),
                        "size": size,
                    },
                )
            )
            if size:
                sizes.append((size, name))

    def tokens(self) -> None:
        pattern = NUM + r"\s*" + values.multiplier_pattern() + r"\s*(?:training\s+)?(?:tokens?|个\s*token|词元|token)"
        for match in self.scan.finditer(pattern):
            try:
                value = values.quantity(match.group(1) + (match.group(2) or ""))
            except ValueError:
                continue
            before = self.scan.original[max(0, match.start() - 24) : match.start()]
            after = self.scan.text[match.end() : match.end() + 24]
            beside_samples = bool(_samples_counted().search(_sentence(self.scan.original, match.span())))
            field = token_count_kind(value, bool(match.group(2)), before, after, beside_samples)
            if field in ("seq_len", "sample_tokens") and match.group(2):  # "128k token context": 128 x 1024
                with contextlib.suppress(ValueError):  # a length beyond what values.length reads: not one
                    value = values.length(match.group(1) + match.group(2))
            if field:
                self.set(field, int(value) if field != "train_tokens" else value, self.scan.take(match))

    def dataset(self) -> None:
        if not self.voc.triggers["dataset"].search(self.scan.text):
            return
        for match in self.scan.finditer(_samples_counted()):
            try:
                self.set(
                    "samples", int(values.quantity(match.group(1) + (match.group(2) or ""))), self.scan.take(match)
                )
            except ValueError:
                continue
        size = (
            r"(\d+(?:\.\d+)?)\s*(tb|gb|t|g)\s*(?:of\s+)?(?:raw\s+|training\s+)?(?:data|text|corpus|dataset|"
            r"语料|数据|文本|训练数据)"
        )
        before = (
            r"(?:data(?:set)?|corpus|语料|数据集?)\s*(?:is|of|about|around|约|大约|有|共)?\s*"
            r"(\d+(?:\.\d+)?)\s*(tb|gb|t|g)"
        )
        for pattern in (size, before):
            for match in self.scan.finditer(pattern):
                scale = 1000.0 if match.group(2).startswith("t") else 1.0
                self.set("dataset_gb", float(match.group(1)) * scale, self.scan.take(match))
        for match in self.scan.finditer(r"(\d+(?:\.\d+)?|[一二两三四五六七八九十]+)\s*(?:epochs?|轮|个\s*epoch|遍)"):
            try:
                self.set("epochs", values.number(match.group(1)), self.scan.take(match))
            except ValueError:  # more digits than a float holds: not a count anyone meant
                continue

    def sequence(self) -> None:
        label = (
            r"(?:seq(?:uence)?(?:[ _-]?len(?:gth)?)?|context(?:[ _-]?(?:length|window|len))?|max(?:imum)?[ _]"
            r"(?:seq(?:uence)?[ _])?len(?:gth)?|max[ _-]?model[ _-]?len|ctx"
            r"|上下文(?:长度|窗口)?|序列长度|最大长度|文本长度|长度)"
        )
        value = r"(\d+(?:\.\d+)?\s*[km]?)"
        # "context_len > 50000", "keep the max_seq_len to 32768", "max length of up to 4k", "长度不超过32k"
        joiner = (
            r"(?:of up to|up to|of|=|:|is|to|at|around|about|~|[<>]=?|[≤≥]"
            r"|为|是|到|达到|不超过|超过|大于|小于|约|大约|在)?"
        )
        patterns = (
            # a range's first end is not the length ("up to 16-32k": the tokens reader takes its top)
            label + r"`?\s*" + joiner + r"\s*`?\s*" + value + _NOT_A_LENGTH_AFTER + r"(?:\s*tokens?)?",
            value + r"\s*(?:tokens?\s*)?(?:of\s+|的\s*)?" + label,  # "8k context", "用4096的max_length"
            value + r"\s*(?:tokens?\s*)?的?\s*(?:输入|input)(?!\s*[a-z])",  # "接受200k输入": a length of input
            # a bare "8k" is a context length only when it is one: a power of two (4k, 8k, 32k, 128k)
            r"(?<![\d.$])((?:1|2|4|8|16|32|64|128|256|512)\s*k)(?![a-z0-9])"
            r"(?!\s*(?:samples?|examples?|条|tokens?|steps?|\$|美元|usd))",
            # "7B 100k", "Llama2 70B 32k": a length written right after a model size is its context
            r"(?<=\db)[\s\-_]+(\d{1,4}\s*k)(?![a-z0-9])",
            r"(\d{1,4}\s*k)\s*(?=models?\b|版本|版)",
        )
        for pattern in patterns:
            for match in self.scan.finditer(pattern):
                if _PER_BEFORE.search(self.scan.text, max(0, match.start() - 8), match.start()):
                    continue  # "VRAM per 1k context", "每1k上下文": the unit of a rate, not a length
                try:
                    seq = values.length(match.group(1))
                except ValueError:
                    continue
                if 16 <= seq <= 100_000_000:
                    self.set("seq_len", seq, self.scan.take(match))

    def prompt_and_response(self) -> None:
        """A prompt's and a response's lengths written apart ("Prompt length: 40K tokens / Response
        length: 10K tokens", verl's max_prompt_length and max_response_length, 输入长度/输出长度):
        a sequence holds both, so its length is their sum, the first its prompt."""
        prompt = self.scan.search(_PROMPT_LENGTH)
        response = self.scan.search(_RESPONSE_LENGTH)
        if not (prompt and response):
            return
        try:
            prompt_tokens = values.length(next(g for g in prompt.groups() if g))
            total = prompt_tokens + values.length(next(g for g in response.groups() if g))
        except ValueError:
            return
        words = self.scan.take(prompt) + " + " + self.scan.take(response)
        self.set("seq_len", int(total), words)
        self.set("prompt_tokens", int(prompt_tokens), words)  # a served sequence's prompt

    def served_split(self) -> None:
        """A served sequence's prompt and output ("input 2048 output 128", "ISL 1k OSL 8k", "1k/1k",
        "2048 input / 128 output tokens", "输入2000输出500"): the prompt, and the sequence as both; a
        prompt alone in a serving question ("5000-token prompts", "prompts of 5k tokens"); and where the
        prompts are prefilled ("disaggregated", "PD separation", "prefill/decode 分离")."""
        self._engine_readings("prefill_mode")
        serving = bool(dict(self.voc.methods)["infer"].search(self.scan.text))
        split = self.voc.served_split
        for pattern in _split_patterns(split["prompt"], split["output"], serving):
            for match in self.scan.finditer(pattern):
                with contextlib.suppress(ValueError):
                    prompt, output = (values.length(g) for g in match.groups())
                    if prompt >= 16 and output >= 1 and prompt + output <= 100_000_000:
                        words = self.scan.take(match)
                        self.set("prompt_tokens", prompt, words)
                        self.set("seq_len", prompt + output, words)
        if not serving:
            return  # a training question's "prompts of 1500 tokens" are its samples' length (tokens())
        for pattern in _prompt_patterns(split["prompt"]):
            for match in self.scan.finditer(pattern):
                with contextlib.suppress(ValueError):
                    prompt = values.length(match.group(1))
                    if 16 <= prompt <= 100_000_000:
                        self.set("prompt_tokens", prompt, self.scan.take(match))

    def counts(self) -> None:
        """GPU and node counts: "2台8卡", "2机16卡", "two nodes of 8", "8 GPUs", "8张卡", "单卡"."""
        self._nodes_of_cards()
        self._cards_across_nodes()
        self._plain_cards()
        for match in self.scan.finditer(_ONE_CARD):
            self.set("gpus", 1, self.scan.take(match))
        for match in self.scan.finditer(self.voc.one_machine):
            self.set("nodes", 1, self.scan.take(match))
        for match in self.scan.finditer(NUM + _NODES_WORDS):  # "4-node", "2 servers", "6台PC", "共 4机"
            if match.group(1) in ("a", "an"):
                continue
            self.set("nodes", int(count_value(match.group(1))), self.scan.take(match))

    def _nodes_of_cards(self) -> None:
        """ "2台8卡", "2机16卡", "two nodes of 8 GPUs", "4 nodes with totally 32 gpus"."""
        for match in self.scan.finditer(_NODES_OF_CARDS):
            nodes, count = count_value(match.group(1)), count_value(match.group(4))
            if nodes < 1:
                continue  # "0台8卡": no machines, no count to read
            # "2机16卡" is 16 GPUs over 2 machines; "2台8卡", "two nodes of 8", "2 servers x 8 GPUs" are per
            # node; "2 nodes with 16 GPUs", "2 nodes, 16 GPUs" are totals: more than a usual server holds (HGX: 8)
            said = match.group(0)
            joined = " with " in f" {said} " or "," in said or "，" in said
            split_evenly = count % nodes == 0  # "3机4卡" is no total: 4 cards do not split over 3 machines
            total_by_with = joined and count > USUAL_GPUS_PER_SERVER and split_evenly
            said_total = (
                match.group(3) is not None or (match.group(2).startswith("机") and split_evenly) or total_by_with
            )
            per_machine_total = said_total and "each" not in said
            total = count if per_machine_total else nodes * count
            words = self.scan.take(match)
            self.set("nodes", int(nodes), words)
            self.set("gpus", int(total), words)

    def _cards_across_nodes(self) -> None:
        """ "16 GPUs across 2 nodes"."""
        for match in self.scan.finditer(_CARDS_ACROSS_NODES):
            words = self.scan.take(match)
            self.set("gpus", int(count_value(match.group(1))), words)
            self.set("nodes", int(count_value(match.group(2))), words)

    def _plain_cards(self) -> None:
        """ "8 GPUs", "8张卡", "32卡": a count of cards; "two gpu servers" count servers instead."""
        for match in self.scan.finditer(_PLAIN_CARDS):
            servers = _GPU_SERVERS.match(self.scan.text, match.end())
            if servers and match.group(1).isdigit() and _ONE_SERVER_AFTER.match(self.scan.text, match.end()):
                servers = None  # "an 8 GPU server" holds 8
            if match.group(1) in ("a", "an") or servers:
                continue  # "two gpu servers" are servers; "an 8-GPU server" holds 8
            count = count_value(match.group(1))
            if count == int(count) and 0 <= count <= 100_000:
                self.set("gpus", int(count), self.scan.take(match))

    def fabric(self) -> None:
        """The network between nodes ("100G ethernet", "万兆网", "NDR InfiniBand";
        knowledge/rules/*/fabric.yaml); InfiniBand or RoCE of unstated speed is the GPU type's usual
        one (its node_fabric) when that is of the kind, else the slower generation, and the answer
        says so. Two networks named ("100G ethernet or InfiniBand?") are a choice: none is fixed,
        the answer compares them all."""
        if not self.voc.triggers["fabric"].search(self.scan.text):
            return
        found = engine.find(self.scan.text, engine.rules("fabric"), self.scan.original)
        speeds = {span.value.split("-")[0] for span in found if span.value not in UNSTATED_SPEED}
        named = {span.value for span in found} - speeds  # "NDR InfiniBand": the speed says it
        if len(named) != 1:
            return
        fabric = named.pop()
        words = self._take_span(min((s for s in found if s.value == fabric), key=lambda s: s.start))
        if fabric in UNSTATED_SPEED:
            gpu = self.cat.gpus.get(self.fields.get("gpu", ""))
            usual = gpu.node_fabric if gpu and gpu.node_fabric.startswith(fabric) else UNSTATED_SPEED[fabric]
            self.notes.append(Note(code="fabric_speed_assumed", params={"words": words, "fabric": usual}))
            fabric = usual
        self.set("fabric", fabric, words)

    def concurrency(self) -> None:
        """Sequences served at once ("200 concurrent users", "并发100"): the serving concurrency; else
        the users a service is for ("for 32 users", "支持200个用户"), all taken at once and said so
        (knowledge/rules/*/concurrency.yaml, users.yaml)."""
        if self.voc.triggers["concurrency"].search(self.scan.text):
            self._engine_readings("concurrency")
        if "micro_batch" in self.fields:
            return
        spans = engine.read(self.scan.text, "users", original=self.scan.original)
        if spans:  # the first rule that reads any, at its first place
            first = min(spans, key=lambda span: (-span.rule.priority, span.start))
            self.users_read = (first.value, self._take_span(first))

    def per_node_counts(self) -> None:
        """A GPU count said per server beside a node count ("4台服务器，每台8张H800", "3 nodes, 8
        A100 per node") is multiplied out: 32 GPUs on 4 nodes."""
        span, nodes = self.spans.get("gpus"), self.fields.get("nodes")
        if span is None or not nodes or nodes <= 1 or self.words.get("gpus") == self.words.get("nodes"):
            return  # no count, one node, or "2台8卡" already read both together
        text = self.scan.original
        if _PER_NODE_BEFORE.search(text[max(0, span[0] - 14) : span[0]]) or _PER_NODE_AFTER.match(text, span[1]):
            per_node = self.fields["gpus"]
            self.fields["gpus"] = per_node * nodes
            self.notes.append(Note(code="per_node_count", params={"per_node": per_node, "nodes": nodes}))

    def machines_asked(self) -> None:
        """A count of cards written with a question for the number of machines ("how many 8xH100
        nodes", "nodes of 8 H100?", "需要几台8卡A100", "8卡H100 ... 需要几台") is what one machine
        holds: the job's GPUs and machines are left to the plan, and the answer says so."""
        span, nodes = self.spans.get("gpus"), self.fields.get("nodes")
        asked = self.voc.asks_machines.search(self.scan.original)
        if span is None or nodes or not asked:
            return
        words = self.words["gpus"]
        in_the_ask = span[0] < asked.end() and asked.start() < span[1]  # "how many 8xH100 nodes"
        of_machines = _MACHINES_OF.search(self.scan.original, max(0, span[0] - 16), span[0])
        per_machine_form = "卡" in words and not re.search(r"张|块", words)  # "8卡A100", not "8张A100"
        if in_the_ask or of_machines or per_machine_form:
            per_node = self.fields["gpus"]
            self._drop_counts_read_at(span)
            self.notes.append(Note(code="count_per_machine", params={"per_node": per_node, "words": words}))

    def gpu_memory(self) -> None:
        """A GPU given by its memory only: "单卡48G", "48G显存", "a 24GB card", "80GB GPUs"; the
        servers' RAM ("内存 256G", "512GB RAM") is read first, so it is not taken for a GPU's."""
        if not self.voc.triggers["gpu_memory"].search(self.scan.text) or not _MEMORY_SIZE.search(self.scan.text):
            return
        for match in self.scan.finditer(_HOST_RAM):
            number, unit = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
            gib = float(number) * (1024 if unit.startswith("t") else 1)
            if 4 <= gib <= 65_536:
                self.set("host_ram_gib", gib, self.scan.take(match))
        for pattern, one_gpu, own in _MEMORY_PATTERNS:
            for match in self.scan.finditer(pattern):
                gib = float(match.group(2))
                window = (self.scan.text, max(0, match.start() - COUNT_WINDOW), match.start())
                if self._all_cards_memory(match, window, one_gpu):
                    self.scan.blank(*match.span())  # the cards' memory together, not one card's
                    continue
                needed = _NEED_BEFORE.search(*window) is not None  # "需要显存为60G": what a model needs
                said_own = not needed and (own if isinstance(own, bool) else bool(own.search(match.group(0))))
                used = _USAGE_BEFORE.search(*window) is not None
                if used or (not said_own and self._no_named_cards(gib, modded_ok=not needed)):
                    self.scan.blank(*match.span())  # what a run uses, or no named card's memory
                    continue
                if 4 <= gib <= 512:
                    before = (match.group(1) or "").strip()
                    words = self.scan.take(match)
                    counted = None if before else self._count_before(_CARDS_JOINER, match.start())[0]
                    if counted:  # "8张24G的卡": the count written before the memory
                        before, words = counted.group(1), counted.group(0).strip() + " " + words
                        self.scan.blank(*counted.span())
                    self.set("gpu_memory_gib", gib, words)
                    enough = _ENOUGH_AFTER.match(self.scan.text, match.end()) is not None
                    self._memory_count(before, one_gpu, words, enough)

    def _no_named_cards(self, gib: float, modded_ok: bool) -> bool:
        """A memory written apart from the GPUs named that none of them comes with (no catalog
        variant has it; for a desktop card, not within what mods reach, `could_have`, unless it is
        what something needs), or other than the memory written beside the card ("4台H100（80GB）...
        样例是在96GB的卡上"): not their memory, and said so."""
        used = self.fields.get("gpu")
        named = [used] if used in self.cat.gpus else [g for g in self.gpu_ids if g in self.cat.gpus]
        if not named or any(variant_with_memory(g, gib, self.cat) == g for g in named):
            return False  # none named, or the card's own memory said again
        card = self.cat.gpus[named[0]]
        if any(g in self.memory_written_with for g in named):  # its memory was written beside it
            self.notes.append(Note(code="memory_apart_from_stated", params={"gib": gib, "gpu": card.name}))
            return True
        if any(variant_with_memory(g, gib, self.cat) for g in named):
            return False  # "A100，显存40G": the 40 GB A100
        cards = [self.cat.gpus[g] for g in named]
        if modded_ok and any(_DESKTOP.search(c.name) and could_have(c, gib) for c in cards):
            return False  # "4090，显存48G", "2080ti 魔改22G显存"
        self.notes.append(Note(code="memory_apart_from_card", params={"gib": gib, "gpu": card.name}))
        return True

    def _all_cards_memory(self, match: re.Match, window: tuple[str, int, int], one_gpu: bool) -> bool:
        """A memory said of several cards together ("4 * A6000, i.e. 192 GB VRAM in total", "4张4090，
        加起来也就96G显存"): cards counted already, and a word of summing before or after it."""
        if one_gpu or self.fields.get("gpus", 1) <= 1:
            return False
        return bool(_ALL_CARDS_BEFORE.search(*window) or _ALL_CARDS_AFTER.match(self.scan.text, match.end()))

    def _memory_count(self, before: str, one_gpu: bool, words: str, enough: bool = False) -> None:
        """The count beside a memory: "单卡48G" is one, "8*24G" eight; "48G的显卡" and "8G显存够吗"
        (a card asked about) one if nothing else says."""
        if one_gpu and before:
            self.set("gpus", 1, words)
        elif not one_gpu and before and before not in ("a", "an"):
            self.set("gpus", int(count_value(before)), words)
        elif enough or re.search(r"(?:显卡|卡|card|gpu)$", words):
            self.weak("gpus", 1, words)

    def sizes(self) -> list[tuple[float, str]]:
        """Model sizes: "70b", "7 billion", "700亿", "72Bqwen" (a family name glued after it); not a
        count of tokens ("10B 说的是 token 数吗")."""
        pattern = (
            r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*(b|bn|billion|亿|万亿|千亿|百亿"
            # "1.5T parameters", "125M model", "6738.4 Million params": T and M only before such a word
            r"|(?:t|m|million)(?=\s*(?:参数|params?|parameters?|model|模型|moe|" + self.voc.family_names + ")))"
            r"(?:\s*(?:参数|params?|parameters?|的?模型|models?|llm))?(?:(?![a-z])|(?=(?:"
            + self.voc.family_names
            + ")))"
        )
        found = []
        for match in self.scan.finditer(_PARAMS_THEN_SIZE):  # "总参数1T", "parameters: 1.5T"
            size = values.model_size_b(match.group(1) + match.group(2))
            self.mention(("params_b", size), match.span())
            found.append((size, self.scan.take(match)))
        for match in self.scan.finditer(pattern):
            if _TOKENS_AFTER.match(self.scan.original, match.end()):
                continue  # read by tokens() when it can be, else not a size
            try:
                size = values.model_size_b(match.group(1) + match.group(2))
            except ValueError:
                continue
            self.option_spans["model"].append(match.span())
            self.mention(("params_b", size), match.span())
            found.append((size, self.scan.take(match)))
        return found

    def batches(self) -> None:
        if self.voc.triggers["batches"].search(self.scan.text):
            self._engine_readings("batch")

    def _take_span(self, span: engine.Span) -> str:
        """A reading's words, taken from the text as Scan.take takes a match's."""
        self.scan.last_span = (span.start, span.end)
        words = self.scan.text[span.start : span.end].strip()
        self.scan.blank(span.start, span.end)
        return words

    def _engine_readings(self, dimension: str) -> None:
        """The settled readings of a dimension whose rules are data (engine.py), each taken from
        the text and set, with its rule's note when the reading asks for one."""
        for span in engine.read(self.scan.text, dimension, original=self.scan.original):
            words = self._take_span(span)
            self.set(span.field, span.value, words)
            if span.rule.note and span.note_params is not None:
                params = span.note_params or {"words": words, "field": span.field, "value": span.value}
                self.notes.append(Note(code=span.rule.note, params=params))

    def schedule(self) -> None:
        """The deadline: a duration said to be the time one has (knowledge/rules/*/schedule.yaml)."""
        if self.voc.triggers["schedule"].search(self.scan.text):
            self._engine_readings("schedule")

    def budget(self) -> None:
        if self.voc.triggers["budget"].search(self.scan.text):
            self._engine_readings("budget")

    def frameworks(self) -> None:
        """Training frameworks named (knowledge/frameworks.yaml), whose memory habits the plan follows;
        read before the model names, which "LLaMA-Factory" is not."""
        if not self.voc.triggers["training_options"].search(self.scan.text):
            return
        for framework, names in self.voc.framework_ids:
            for match in self.scan.finditer(names):
                self.set("framework", framework, self.scan.take(match))

    def training_options(self) -> None:
        """Precision, ZeRO/FSDP/DeepSpeed, checkpointing, offload, TP/PP, optimizer, LoRA rank."""
        if not self.voc.triggers["training_options"].search(self.scan.text):
            return
        self._precision_and_sharding()
        self._frameworks()
        self._engine_readings("checkpointing")
        self._engine_readings("offload")
        self._engine_readings("parallel")
        self._optimizer()
        self._engine_readings("lora_rank")

    def _precision_and_sharding(self) -> None:
        scan, voc = self.scan, self.voc
        for match in scan.finditer(_KV_CACHE_TYPE):  # before the weights' precision: "fp8 kv cache"
            kind = match.group(1) or match.group(2)
            self.set("kv_cache", _KV_KINDS[re.sub(r"[\s-]", "", kind)], scan.take(match))
        if scan.search(voc.pure_bf16):
            self.set("precision_word", "bf16-pure", scan.take(scan.search(voc.pure_bf16)))
        self._engine_readings("precision")
        self._engine_readings("sharding")

    def _frameworks(self) -> None:
        """Frameworks without memory habits of their own named (serving engines, launchers): noted."""
        for match in self.scan.finditer(self.voc.frameworks):
            self.notes.append(Note(code="framework_noted", params={"value": match.group(0)}))

    def _optimizer(self) -> None:
        self._engine_readings("optimizer")

    def method(self, comparing: bool = False) -> None:
        """The method named first (a word after "not"/"非"/"without" does not count), except that
        "full" beside DPO/PPO or (continued) pretraining is that method, and adapters that are only
        served are serving; a weak word ("run", "Instruct", "train a 2B") counts when nothing else
        is named and no training or fine-tuning word says otherwise; a bare "fine-tune" is full."""
        scan, voc = self.scan, self.voc
        mentions = self._method_mentions()
        strong = [m for m in mentions if not m[2].endswith("_weak")]
        chosen = min(strong or mentions, default=None)
        rl_tool = min((m for m in mentions if m[2] == "ppo_weak"), default=None)
        if chosen and chosen[2] == "pretrain_weak" and rl_tool:
            chosen = rl_tool  # "train a 7b model using verl": the RL framework says which training
        if chosen and chosen[2] == "full":
            chosen = self._whole_model_method(chosen, strong)
        serving = next((m for m in strong if m[2] == "infer"), None)
        if chosen and chosen[2] in ("lora", "qlora") and serving and not self._training_job():
            chosen = serving  # "中文lora 的 4-bit量化模型 ... 推理", "lora模型批量推理速度": serving adapters
        if chosen and chosen[2] == "infer_weak" and self._training_job():
            chosen = None  # "可以做34B模型sft吗？...运行脚本": the training word says more than "run"
        elif chosen and chosen[2] == "pretrain_weak" and self._finetune_elsewhere(chosen):
            chosen = None  # "fine-tuning the 32B model? I tried training the 32B model": a fine-tune
        if chosen:
            self.method_weak = chosen[2] == "pretrain_weak"  # "train a 70B": a pasted script's method wins
            self.fields["method"] = chosen[2].removesuffix("_weak")
            self.words["method"] = chosen[3]
            self._contradiction(strong, chosen, comparing)
            self.methods_named = list(dict.fromkeys(m[2] for m in strong))
        else:
            match = scan.search(voc.finetune)
            words = scan.take(match) if match else self.adapter_negated  # "在非lora的情况下": the whole model
            if words:
                self.fields["method"] = "full"
                self.words["method"] = words
                self.notes.append(Note(code="finetune_read_as_full", params={"words": words}))
        for start, end in self._method_spans:  # found by _method_mentions on the same-length text
            scan.blank(start, end)
        for match in scan.finditer(voc.finetune):
            scan.take(match)

    def _training_job(self) -> bool:
        """A training word outside the names of what training made ("微调后的模型", "LoRA adapter")."""
        text = self.voc.trained_artifacts.sub(lambda m: " " * len(m.group(0)), self.scan.text)
        return bool(self.voc.training.search(text))

    @staticmethod
    def _whole_model_method(full: tuple, strong: list[tuple]) -> tuple:
        """ "full ... DPO" anywhere is full-parameter DPO/PPO; "全参数增量预训练", "full-parameter
        continued pretraining" right beside it are (continued) pretraining, which trains every
        parameter anyway; otherwise the full fine-tune stands."""
        for m in strong:
            if m[2] in ("dpo", "ppo"):
                return m
            if m[2] in ("continue", "pretrain") and 0 <= m[0] - (full[0] + len(full[3])) <= 6:
                return m
        return full

    def _finetune_elsewhere(self, mention: tuple[int, int, str, str]) -> bool:
        """A fine-tuning word outside the words of `mention` ("训练" inside "训练7b" does not count)."""
        start = mention[0]
        text = self.scan.original
        outside = text[:start] + " " * len(mention[3]) + text[start + len(mention[3]) :]
        return bool(self.voc.finetune.search(outside))

    def _method_mentions(self) -> list[tuple[int, int, str, str]]:
        """(position, lexicon order, method, words) of every method word not negated, in one pass
        (at one position the lexicon's order decides, so "qlora" is QLoRA, not LoRA)."""

        negation = artifact_words().negation
        found = []
        self._method_spans = []
        text = self.scan.original
        negated_end = -1
        for match in self.voc.any_method.finditer(text):  # "train 2B": a size read before
            self._method_spans.append(match.span())
            # the first method whose words match here is the one the alternation's branch belongs to
            order = next(i for i, words in enumerate(self.voc.method_patterns) if words.match(text, match.start()))
            negated = negation.search(text[max(0, match.start() - 16) : match.start()])
            if negated or (negated_end >= 0 and _JOINED_TO_NEGATED.fullmatch(text, negated_end, match.start())):
                negated_end = match.end()  # "without any PEFT and Quantization": both
                if negated and self.voc.method_order[order] in ("lora", "qlora"):
                    self.adapter_negated = text[max(0, match.start() - 16) + negated.start() : match.end()]
                continue
            if self.voc.method_order[order].endswith("_weak"):  # "run PPO model": PPO, not serving
                inside = self._strong_method_inside(text, *match.span())
                if inside:
                    found.append(inside)
                    continue
            found.append((match.start(), order, self.voc.method_order[order], match.group(0)))
        return found

    def _strong_method_inside(self, text: str, start: int, end: int) -> tuple[int, int, str, str] | None:
        """The first strong method word inside a weak phrase's words ("run PPO model")."""
        inside = []
        for order, (method, words) in enumerate(zip(self.voc.method_order, self.voc.method_patterns, strict=True)):
            match = None if method.endswith("_weak") else words.search(text, start + 1, end)
            if match:
                inside.append((match.start(), order, method, match.group(0)))
        return min(inside, default=None)

    def _contradiction(self, strong: list[tuple[int, int, str, str]], chosen: tuple, comparing: bool) -> None:
        """ "QLoRA full fine-tune": the first is planned, the other named back."""
        full = next((m for m in strong if m[2] == "full" and self.voc.explicit_full.search(m[3])), None)
        adapter = next((m for m in strong if m[2] in ("lora", "qlora")), None)
        if full and adapter and not comparing:
            other = adapter if chosen[2] == "full" else full
            self.contradiction = Note(code="method_contradiction", params={"used": chosen[3], "other": other[3]})

    def context(self) -> None:
        """What the plan should favour, the training data's kind, where a service's users are (when
        the question speaks of users) and the GPUs' region (knowledge/rules/*/objective.yaml, ...)."""
        self._engine_readings("objective")
        self._engine_readings("data_kind")
        if self.scan.search(self.voc.users_context):
            self._engine_readings("user_area")
        self._engine_readings("region")

    def misspelt_model(self) -> None:
        """A model-like word nothing read ("DeekSeep-R1"): the catalog model it is a misspelling
        of when the letters are close and the numbers identical (said back)."""
        if "model" in self.fields:
            return
        for match in _rx(r"[a-z][a-z0-9.\-]*\d[a-z0-9.\-]*|[a-z]+-[a-z0-9.\-]+").finditer(self.scan.text):
            start, end = match.span()
            original = self.scan.original
            while start > 0 and not original[start - 1].isspace():
                start -= 1  # the whole word as written: "lama3-70b" even when "70b" was read as a size
            while end < len(original) and not original[end].isspace():
                end += 1
            word = self.scan.original[start:end].strip(".-")
            close = close_models(word, self.cat, n=3)
            if close and close[0][1] >= 85 and close[0][2]:
                spec = self.cat.models[close[0][0]]
                size = self.fields.get("params_b")
                if size and abs(size - spec.params_b) > 0.2 * size:
                    continue  # the size written elsewhere is another model's
                self.fields.pop("params_b", None)
                self.fields["model"], self.words["model"] = spec.id, word
                self.notes.append(Note(code="model_read_as", params={"value": word, "model": spec.id}))
                return

    def leftovers(self) -> None:
        """Technical-looking words nothing read: tokens with digits or model-like names."""
        for word in re.findall(r"[a-z][a-z0-9.\-]*\d[a-z0-9.\-]*|\d+[a-z][a-z0-9.\-]*", self.scan.text):
            word = word.strip(".-")
            if word and word not in self.voc.stopwords and word not in self.unknown:
                self.unknown.append(word)


def precision_for(word: str, method: str | None) -> str | None:
    """A precision word in the request's terms: serving keeps bf16/fp16/fp8/int8/int4; training
    maps bf16 to bf16-mixed (pure bf16 when said), fp16 to fp16-mixed, fp8 to fp8-mixed."""
    if method == "infer":
        return {"bf16-pure": "bf16"}.get(word, word)
    return {"bf16": "bf16-mixed", "bf16-pure": "bf16", "fp16": "fp16-mixed", "fp8": "fp8-mixed", "fp32": "fp32"}.get(
        word
    )


def _digits(text: str) -> list[str]:
    return re.findall(r"\d+", text)


def close_models(value: str, cat: Catalog, n: int = 3, cutoff: float = 70) -> list[tuple[str, float, bool]]:
    """Catalog models spelled like `value` ("DeekSeep-R1", "lama3-70b"): (id, score 0-100, whether
    its numbers are exactly the ones written). Letters may be misspelt, sizes and versions not:
    "llama-3-7b" is not "llama-3-70b"."""

    key = normalize_name(value)
    if len(key) < 4:
        return []
    hits = process.extract(key, list(cat.model_index), scorer=fuzz.ratio, limit=n * 4, score_cutoff=cutoff)
    out: dict[str, tuple[str, float, bool]] = {}
    for name, score, _ in hits:
        model = cat.model_index[name]
        if model not in out and set(_digits(key)) <= set(_digits(name)):
            out[model] = (model, score, _digits(key) == _digits(name))
    return sorted(out.values(), key=lambda m: -m[1])[:n]


def suggest_models(value: str, cat: Catalog, n: int = 3) -> list[str]:
    """Did-you-mean candidates for a model name the catalog does not know (numbers may differ:
    "llama-3-7b" suggests Llama 3 8B)."""

    hits = process.extract(
        normalize_name(value), list(cat.model_index), scorer=fuzz.ratio, limit=n * 4, score_cutoff=50
    )
    return list(dict.fromkeys(cat.model_index[name] for name, _, _ in hits))[:n]


_VERSION_AFTER = re.compile(r"^[\s_-]*(\d+(?:\.\d+)?)(?![\d.]*\s*[bm](?![a-z]))")
_SIZE_ONLY = re.compile(r"\d+(?:\.\d+)?b")


def family_sizes(name: str, after: str, cat: Catalog) -> tuple[str, list[str]] | None:
    """A family (and version) named without a size ("LLaMA 3", "qwen2.5"): the catalog's sizes
    of it, smallest first, so the question back can list them; None when the catalog has none."""
    version = _VERSION_AFTER.match(after)
    latin = re.match(r"[a-z0-9.\s_-]*", name.strip().lower()).group(0).strip()  # not the words after it
    key = re.sub(r"[\s_]+", "-", latin)
    if version and not re.search(r"\d$", key):
        key = f"{key}-{version.group(1)}"
    # the family's own sizes (qwen2.5-7b), not its variants (qwen2.5-coder-7b)
    sized = [
        m for m in cat.models.values() if m.id.startswith(key + "-") and _SIZE_ONLY.fullmatch(m.id[len(key) + 1 :])
    ]
    if len(sized) < 2:
        return None
    sized.sort(key=lambda m: m.params_b)
    return key, [m.id for m in sized][:8]


def suggest_gpus(value: str, cat: Catalog, n: int = 3) -> list[str]:
    """Did-you-mean candidates for a GPU name the catalog does not know."""

    hits = process.extract(normalize_name(value), list(cat.gpu_index), scorer=fuzz.ratio, limit=n * 3, score_cutoff=50)
    return list(dict.fromkeys(cat.gpu_index[name] for name, _, _ in hits))[:n]
