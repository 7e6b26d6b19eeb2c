"""What a question asks to be told (intent.question_kind): the figure its first line gives. Each kind
has its way of asking in both languages, and the phrasings that state a figure rather than ask it."""

import pytest

from gpuplan.bot.language import intent

KINDS = [
    # the sequences at once
    ("how many concurrent users can 8 A100 serve llama 3 70b", "concurrency"),
    ("8 A100 serving qwen2.5-72b, max concurrency?", "concurrency"),
    ("how many simultaneous requests can one 4090 handle with qwen2.5-7b", "concurrency"),
    ("8卡A100部署qwen2.5-72b最多支持多少并发", "concurrency"),
    ("8卡A100跑qwen2.5-72b推理，能支持多少并发", "concurrency"),
    ("qwen 72b能支持多少人同时访问", "concurrency"),
    ("how many requests per second can 8 A100 handle", "plan"),
    ("每秒能处理多少请求", "plan"),
    ("how many GPUs do we need for 200 concurrent users", "count"),
    ("how many users do we have", "plan"),
    # the disk
    ("how much disk space do I need to fine-tune llama 3 70b?", "storage"),
    ("serve deepseek-v3, how big an SSD?", "storage"),
    ("pretrain a 7b on 1T tokens, storage requirements?", "storage"),
    ("训练qwen2.5-7b lora需要多大的硬盘", "storage"),
    ("512GB的固态够不够全参微调qwen2.5-14b", "storage"),
    ("70b lora 硬盘空间要多少", "storage"),
    ("how much memory does llama 3 8b need", "memory"),
    ("GPU util is low, the data is on a slow disk", "plan"),
    # the host ram
    ("how much host RAM do I need for zero-3 offload of a 70b", "host_ram"),
    ("how much CPU memory for llama 3 8b lora on 8 H100", "host_ram"),
    ("70b全参 offload 主机内存要多大", "host_ram"),
    ("how much RAM does llama 3 8b need", "memory"),
    # the longest sequence
    ("what's the max context I can serve llama 3 70b with on 8 H100?", "longest"),
    ("max sequence length for qwen2.5-7b lora on one 4090?", "longest"),
    ("how long a context can 8 h100 train for llama 3.1 8b", "longest"),
    ("4张4090能跑多长的上下文 qwen2.5-7b 推理", "longest"),
    ("qwen2.5-72b 推理 2张A100 最长上下文多少", "longest"),
    ("上下文最多能开到多少", "longest"),
    ("can I run 32k context on a 4090 with qwen 7b?", "fit"),
    ("how long will it take to fine-tune llama 3 8b", "time"),
    # the largest batch
    ("what batch size can I use for llama 3 8b lora on one A100", "batch"),
    ("llama 3 8b full fine-tune on 8 h100, max batch size?", "batch"),
    ("qwen2.5-7b 全参 8张4090 batch size最大能开多少", "batch"),
    ("最大的batch是多少", "batch"),
    ("batch size 8, llama 3 8b lora on a 4090", "plan"),
    ("per_device_train_batch_size=4 OOM on a 4090", "plan"),
    # the tokens per second
    ("how many tokens per second can llama 3 70b generate on 8 H100?", "throughput"),
    ("what throughput should I expect training llama 3 8b on 8 H100?", "throughput"),
    ("qwen2.5-72b 推理 每秒能生成多少token 8张H100", "throughput"),
    ("8张H100训练llama 3 8b 吞吐能到多少", "throughput"),
    ("we get 30 tokens/s on 8 h100 with llama 70b", "plan"),
    ("how long will it take to fine-tune llama 3 8b", "time"),
    # the gpu hours
    ("how many GPU hours to pretrain a 1B model on 20B tokens?", "gpu_hours"),
    ("预训练7b 1T token 需要多少卡时", "gpu_hours"),
    ("how many hours will it take", "time"),
    # the month
    ("serving llama 3 8b, how much per month?", "cost_month"),
    ("部署qwen2.5-72b 每月多少钱", "cost_month"),
    ("how much per hour to serve llama 3 8b", "cost"),
    ("pretrain a 7b within a month", "plan"),
]


@pytest.mark.parametrize("question, kind", KINDS)
def test_the_question_asks_what_its_first_line_gives(question, kind):
    assert intent.question_kind(question) == kind
