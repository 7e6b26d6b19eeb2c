"""Table-driven parser tests: questions as people write them, in English and Chinese, with the
fields each must yield. `intent` (and `not_intent`), `topics` (and `not_topics`), `compare`, `errors`,
`notes` and `unknown` are checked when given; every other key is a Request field."""

import pytest

from gpuplan.bot.language.parser import parse

T = 1e12
B = 1e9

EN = [
    ("70b full", dict(params_b=70, method="full")),
    (
        "How many H100s to fully fine-tune Llama 3 70B with 8k context in two weeks?",
        dict(model="llama-3-70b", method="full", gpu="h100-80gb", seq_len=8192, deadline_days=14),
    ),
    ("llama-3-70b lora gpu=a100 gpus=2", dict(model="llama-3-70b", method="lora", gpu="a100-80gb", gpus=2)),
    ("qwen2.5-72b qlora on a single 48GB card", dict(model="qwen2.5-72b", method="qlora", gpus=1, gpu_memory_gib=48)),
    ("llama-3-8b lora gpu=4090", dict(model="llama-3-8b", method="lora", gpu="rtx-4090-24gb")),
    ("Llama-3.1-70B-Instruct inference on H200", dict(model="llama-3.1-70b", method="infer", gpu="h200-141gb")),
    ("meta-llama/Meta-Llama-3-8B full fine-tune", dict(model="llama-3-8b", method="full")),
    ("Mixtral 8x7B LoRA on 2x A100 80G", dict(model="mixtral-8x7b", method="lora", gpu="a100-80gb", gpus=2)),
    ("fine-tune a 7 billion parameter model", dict(params_b=7, method="full", notes=["finetune_read_as_full"])),
    ("0.5B model full fine-tune on a 4090", dict(params_b=0.5, method="full", gpu="rtx-4090-24gb")),
    ("pretrain 7b on 2T tokens", dict(params_b=7, method="pretrain", train_tokens=2 * T)),
    (
        "pre-train a 1.3B model from scratch with 300B tokens",
        dict(params_b=1.3, method="pretrain", train_tokens=300 * B),
    ),
    (
        "continued pretraining of qwen2.5-7b on 10B tokens",
        dict(model="qwen2.5-7b", method="continue", train_tokens=10 * B),
    ),
    ("domain-adaptive pretraining 13b", dict(params_b=13, method="continue")),
    ("dpo on mistral 7b", dict(model="mistral-7b", method="dpo")),
    ("RLHF for llama3 8b with PPO", dict(model="llama-3-8b", method="ppo")),
    ("GRPO training of qwen2.5-7b", dict(model="qwen2.5-7b", method="ppo")),
    ("serve llama-3-70b for users in South-East Asia", dict(model="llama-3-70b", method="infer", users="sea")),
    (
        "deploy qwen2.5-72b in Singapore with 32 concurrent requests",
        dict(model="qwen2.5-72b", method="infer", region="sg"),
    ),
    ("8 GPUs for a 13b full fine-tune", dict(params_b=13, gpus=8, method="full")),
    ("two nodes of 8 H100 for 70b", dict(params_b=70, gpu="h100-80gb", nodes=2, gpus=16)),
    ("2 servers x 8 GPUs each, 70b full", dict(params_b=70, nodes=2, gpus=16, method="full")),
    ("16 GPUs across 2 nodes 34b", dict(params_b=34, gpus=16, nodes=2)),
    ("will a 24GB card do for 7b lora", dict(params_b=7, method="lora", gpus=1, gpu_memory_gib=24)),
    ("8 x 80GB GPUs for 70b full", dict(params_b=70, gpus=8, gpu_memory_gib=80)),
    ("13b lora with 32k context", dict(params_b=13, method="lora", seq_len=32768)),
    ("7b full seq len 4096 batch size 8", dict(params_b=7, seq_len=4096, micro_batch=8)),
    ("7b full context length of 16k", dict(params_b=7, seq_len=16384)),
    ("global batch size 1024 micro batch 2 pretrain 7b", dict(params_b=7, global_batch=1024, micro_batch=2)),
    ("fine-tune 7b on 50k samples for 3 epochs", dict(params_b=7, samples=50_000, epochs=3)),
    ("lora on 200GB of text 13b", dict(params_b=13, method="lora", dataset_gb=200)),
    ("pretrain 7b on a 2TB corpus", dict(params_b=7, method="pretrain", dataset_gb=2000)),
    ("70b full within 30 days budget $50k", dict(params_b=70, deadline_days=30, budget_usd=50_000)),
    # the time the user has is the deadline; time spent, a rate or a span of something else is not
    (
        "we have $30k and 10 days to pretrain a 3B model on 1T tokens",
        dict(params_b=3, deadline_days=10, budget_usd=30_000, train_tokens=1 * T),
    ),
    ("we only have two weeks to fine-tune llama 3 70b", dict(model="llama-3-70b", deadline_days=14)),
    ("we have 10 days, 70b full on H100", dict(params_b=70, deadline_days=10)),
    ("we've got 3 weeks, lora 70b", dict(deadline_days=21)),
    ("10 days left before the demo, 7b full fine-tune", dict(deadline_days=10)),
    ("3 months to train a 7b from scratch on 1T tokens", dict(deadline_days=90, method="pretrain")),
    ("it took 10 days to train 7b on 8 A100, how many GPUs for 70b?", dict(deadline_days=None)),
    ("the job ran for 10 days, 70b full 64 H100", dict(deadline_days=None)),
    ("it takes 2 hours to train 7b on 8 A100, what about 70b?", dict(deadline_days=None)),
    ("serve llama 70b, 10 days of serving on H100, cost?", dict(deadline_days=None)),
    ("running for 8 hours per day, 70b lora how many days", dict(deadline_days=None)),
    ("70b lora 3 epochs on 8 H100", dict(deadline_days=None, epochs=3)),
    ("step 100/1000 elapsed 3 days 4:00:00, llama 70b full on 8 A100", dict(deadline_days=None)),
    (
        "full finetune of a 72B model on A100, will it fit? Or can it be done with 8 GPUs?",
        dict(params_b=72, method="full", gpus=8, gpu="a100-80gb", intent="plan", compare=None),
    ),
    ("Can i use 8 h-200 gpu to serve kimi-k2 with max context length?", dict(gpu="h200-141gb", gpus=8)),
    ("4 a-100 for 13b lora", dict(gpu="a100-80gb", gpus=4, params_b=13)),
    ("On 4 NVIDIA Tesla V100-32GB GPUs, 7b full", dict(gpu="v100-32gb", gpus=4)),
    ("8x nvidia a100 for 70b lora", dict(gpu="a100-80gb", gpus=8)),
    (
        "Say I train from scratch with 96 NVIDIA DGX-A100 (8X40G) machines, how long?",
        dict(gpu="a100-40gb", gpus=768, nodes=96, notes=["servers_of_usual_size"]),
    ),
    ("a DGX H100 for 70b full", dict(gpu="h100-80gb", gpus=8, nodes=1)),
    # what a model "needs" or "requires" is quoted, the user's own setup wins over it
    ("Llama 70b needs 8xH100; can I run it on my single 4090?", dict(gpu="rtx-4090-24gb", gpus=1)),
    # a setting written with several values is a choice, left open; "?" after a value ends the sentence
    (
        "deploy a 70b model on 4 * A6000. Which is better, tp=2,pp=2 or tp=1,pp=4 or tp=4, pp=1?",
        dict(tp=None, pp=None, gpus=4, notes=["setting_choices"]),
    ),
    ("70b lora, seq=4k.", dict(seq_len=4096)),
    (
        "70b lora gpu=a100 or gpu=h100",
        dict(gpu=None, intent="compare", compare={"kind": "gpu", "options": ["a100-80gb", "h100-80gb"]}),
    ),
    (
        "lora model=llama-3-8b or model=qwen2.5-7b",
        dict(model=None, intent="compare", compare={"kind": "model", "options": ["llama-3-8b", "qwen2.5-7b"]}),
    ),
    ("Cuda Out of Memory 4xA100 160Gb Memory, llama 7b", dict(gpu="a100-40gb", gpus=4, notes=["memory_of_all"])),
    ("Training Qwen-VL-2.5-3B using a single 24GB GPU", dict(model="qwen2.5-vl-3b", gpus=1)),
    ("This model requires 8 A100, but I have 4 RTX 4090, can I run it?", dict(gpu="rtx-4090-24gb", gpus=4)),
    (
        "inference speed:\n+ NVIDIA A100-PCIE 40G: 2.67\n+ NVIDIA GeForce RTX 3090: 2.75\nwhy is the A100 as slow?",
        dict(gpu="a100-pcie-40gb"),
    ),
    # a GPU name the catalog lacks is said back, not replaced by the default without a word
    (
        "Dedicated GPU: NVIDIA T500. Which DeepSeek Coder V2 can I run?",
        dict(gpu=None, notes=["unsupported_hardware"], unknown=["nvidia t500"]),
    ),
    ("can a GTX 1080 Ti fine-tune a 1b model?", dict(gpu="gtx-1080ti-11gb", gpus=1)),
    ("nvidia 535 driver, 7b lora on a 4090", dict(gpu="rtx-4090-24gb", not_topics=[], unknown=[])),
    ("|   0  Tesla V100-PCIE-32GB  On | 8 of them, 13b lora", dict(gpu="v100-pcie-32gb")),
    ("a 100 GB dataset, 7b lora", dict(gpu=None, dataset_gb=100)),
    ("I used to train on 2 GPUs; with 8 A100 can I do 70b lora?", dict(gpus=8, gpu="a100-80gb", params_b=70)),
    ("previously 1 GPU was enough, now 8 H100 for a 13b full fine-tune", dict(gpus=8, params_b=13)),
    # a memory in brackets after the card is that card's ("A100(40G)": the 40 GB A100), and one written
    # elsewhere is not; the same card named without its memory is no second card to weigh
    (
        "Can I use 8*A100(40G) to train LLaVA-v1.5-13B? I still get OOM. Does this mean it requires 80GB GPUs?",
        dict(gpu="a100-40gb", gpus=8, gpu_memory_gib=None, notes=["memory_apart_from_stated"]),
    ),
    (
        "The paper reports a 2x speedup on A100, I see none. test environment: GPU: A100 40GB, llama-7b awq",
        dict(gpu="a100-40gb", compare=None),
    ),
    # the hardware the user means to get is the setup asked about, over what they have now
    (
        "I've been using an A100 at work, but I'm planning to buy a 3060 for home. Can it fine-tune a 7b with lora?",
        dict(gpu="rtx-3060-12gb", gpus=1, params_b=7, method="lora"),
    ),
    (
        "We rent 8 H100 now; thinking of switching to 16 L40S for llama 70b lora, enough?",
        dict(gpu="l40s-48gb", gpus=16),
    ),
    (
        "my 4090 runs out of memory; would I get further if I upgrade to an A6000 for 13b lora?",
        dict(gpu="rtx-a6000-48gb"),
    ),
    ("need it done in 3 days, 13b lora", dict(params_b=13, deadline_days=3, method="lora")),
    ("7b lora budget of 2000 dollars", dict(params_b=7, budget_usd=2000)),
    ("70b lora bf16 zero3 gradient checkpointing", dict(params_b=70, precision="bf16-mixed", zero=3, ckpt="full")),
    ("70b full fsdp with cpu offload", dict(params_b=70, zero=3, offload="cpu")),
    ("70b full zero-infinity", dict(params_b=70, offload="nvme-all")),
    ("70b pretrain tp8 pp4 on 512 GPUs", dict(params_b=70, tp=8, pp=4, gpus=512, method="pretrain")),
    (
        "pretrain qwen3-235b-a22b on 256 h100 tp=2 pp=8 ep=32 etp=1",
        dict(model="qwen3-235b-a22b", method="pretrain", gpus=256, tp=2, pp=8, ep=32, etp=1),
    ),
    ("13b full with pure bf16 and 8-bit adam", dict(params_b=13, precision="bf16", optimizer="adamw8bit")),
    ("7b full in fp8 on H100", dict(params_b=7, precision="fp8-mixed", gpu="h100-80gb")),
    ("serve llama-3-70b in int4 awq", dict(model="llama-3-70b", method="infer", precision="int4")),
    ("fastest way to pretrain 13b", dict(params_b=13, method="pretrain", objective="fastest")),
    ("cheapest setup for 7b qlora", dict(params_b=7, method="qlora", objective="cheapest")),
    ("fewest GPUs for 70b lora", dict(params_b=70, method="lora", objective="fewest")),
    ("lora rank 64 on llama3 8b", dict(model="llama-3-8b", lora_rank=64)),
    ("7b vision model full fine-tune on images", dict(params_b=7, data="image")),
    ("70b on pre-tokenized data, pretrain", dict(params_b=70, data="tokens", method="pretrain")),
    (
        "A100 vs H100 for 70b lora",
        dict(
            params_b=70, method="lora", intent="compare", compare={"kind": "gpu", "options": ["a100-80gb", "h100-80gb"]}
        ),
    ),
    (
        "QLoRA or full fine-tune for 13b?",
        dict(params_b=13, intent="compare", compare={"kind": "method", "options": ["qlora", "full"]}),
    ),
    ("7b vs 13b lora on a 4090", dict(intent="compare", compare={"kind": "model", "options": [7.0, 13.0]})),
    (
        "GPU utilization only 40% on 8 GPUs, dataloader is slow",
        dict(gpus=8, intent="troubleshoot", topics=["gpu_starved_io"]),
    ),
    (
        "CUDA out of memory on 70b full fine-tune with 8 A100",
        dict(params_b=70, gpus=8, intent="troubleshoot", topics=["oom_large_model"]),
    ),
    ("NCCL timeout on 4 nodes", dict(nodes=4, intent="troubleshoot", topics=["nccl_timeout"])),
    ("loss spikes then goes nan at step 2000", dict(intent="troubleshoot", topics=["loss_instability"])),
    ("do I need InfiniBand or is RoCE enough for 4 nodes?", dict(intent="troubleshoot", topics=["network_choice"])),
    ("doubling GPUs doesn't speed up training", dict(intent="troubleshoot", topics=["scaling_efficiency"])),
    ("saving the checkpoint takes 20 minutes", dict(intent="troubleshoot", topics=["checkpoint_slow"])),
    (
        "how many tokens should I pretrain a 7b model on",
        dict(params_b=7, method="pretrain", topics=["chinchilla_tokens"]),
    ),
    ("can I use MIG to share an H100 across teams", dict(gpu="h100-80gb", topics=["mig_multitenant"])),
    ("is fp8 with Transformer Engine worth it on H100", dict(gpu="h100-80gb", topics=["fp8_transformer_engine"])),
    ("help", dict(intent="help")),
    ("", dict(intent="help")),
    ("<@U0123> 70b full <!here>", dict(params_b=70, method="full")),
    ("see <https://example.com|the doc> 13b lora", dict(params_b=13, method="lora")),
    ("train llama-4-70b", dict(params_b=70, notes=["unknown_model_name"])),
    # two readings of one thing never stop a question: the first is used, the other named back
    ("QLoRA full fine-tune 7b", dict(params_b=7, method="qlora", notes=["method_contradiction"])),
    ("7b 13b lora", dict(params_b=7, method="lora", notes=["set_aside"])),
    ("70b full on 8 H100 and 16 A100", dict(gpu="h100-80gb", gpus=8, notes=["set_aside"])),
    ("70b gpu=tpu", dict(errors=["unknown_gpu"])),
    ("70b foo=bar", dict(params_b=70)),  # not a gpuplan setting: text
    ("70b seq=abc", dict(errors=["bad_value"])),
    ("train 7b on Gaudi2", dict(params_b=7, notes=["unsupported_hardware"], unknown=["gaudi2"])),
    ("７０ｂ　ｆｕｌｌ", dict(params_b=70, method="full")),
    ("model=qwen2.5-72b method=qlora seq=8k", dict(model="qwen2.5-72b", method="qlora", seq_len=8192)),
    (
        "70b full objective=fewest fabric=ib-hdr200 data=tokens users=nea",
        dict(params_b=70, objective="fewest", fabric="ib-hdr200", data="tokens", users="nea"),
    ),
    ("llama-3-70b on 300B tokens", dict(model="llama-3-70b", train_tokens=300 * B)),
    ("llama-3-8b on 15T tokens pretrain", dict(model="llama-3-8b", train_tokens=15 * T, method="pretrain")),
    ("70b full gpu_mem=48", dict(params_b=70, gpu_memory_gib=48)),
    # the model most mentioned, a question sentence counting double
    (
        "Works fine with Qwen-7B on an H800 but OOM with Qwen-14B. What does Qwen-14B need?",
        dict(model="qwen-14b", gpu="h800-80gb"),
    ),
    ("Llama-2 with FSDP: 7B is fine, 70B PEFT fine, but 70B full is slow", dict(params_b=70)),
    ("I fine-tuned 7B on my 4090, can I do 13B too", dict(params_b=7)),  # a tie keeps the first
    ("can I finetune Llama-2-70B using 16 A10 in one machine", dict(model="llama-2-70b", gpus=16, nodes=1)),
    ("llama 3 8b lora, samples are 2048 tokens each", dict(model="llama-3-8b", seq_len=2048, train_tokens=None)),
    ("what is the minimum video memory required for mixtral 8x7b?", dict(model="mixtral-8x7b", data=None)),
    (
        'lora data is JSONL:\n{"text": "raw text"},\nIt would be nice to fine-tune llama 3 8b in 16-bit LoRA',
        dict(model="llama-3-8b", method="lora"),
    ),
    # "to run <model>" and an Instruct/Chat/-it checkpoint with no method word ask about serving;
    # any training word, or running code rather than a model, keeps the method open
    ("How much VRAM do I need to run Llama 3.1 8B Instruct?", dict(model="llama-3.1-8b", method="infer")),
    ("Mistral-7B-Instruct-v0.3 memory requirements?", dict(model="mistral-7b", method="infer")),
    ("gemma-2-9b-it on a T4?", dict(method="infer", gpu="t4-16gb")),
    ("fine-tune Llama-3-8B-Instruct on 2 A100", dict(model="llama-3-8b", method="full")),
    ("can I run training of a 7b model on 4 A100", dict(params_b=7, method=None)),
    ("GPU util low during training, running on 8 A100", dict(method=None, gpus=8)),
    ("I tried to run the nlp example, but fp8 is slower than fp16", dict(method=None)),
    # "N nodes with M GPUs": M per node up to a usual server's 8, a total beyond
    ("NCCL timeout when training on 2 nodes with 16 GPUs", dict(gpus=16, nodes=2)),
    ("2 nodes with 8 GPUs, 70b full", dict(gpus=16, nodes=2)),
    ("3 nodes each with 16 GPUs, 70b full", dict(gpus=48, nodes=3)),
    ("2 nodes, 16 GPUs total, llama 70b lora", dict(gpus=16, nodes=2)),
    ("3 nodes, 8 A100 per node, 70b full", dict(gpus=24, nodes=3, gpu="a100-80gb", notes=["per_node_count"])),
    ("2 servers each with 8 H100, llama 70b lora", dict(gpus=16, nodes=2, gpu="h100-80gb")),
    ("our 4-node A100 job is 3x slower than single node", dict(nodes=4, notes=["baseline_count"])),
    ("an 8-GPU server with A100, 13b full", dict(gpus=8, gpu="a100-80gb")),
    # an average sample length is not the sequence length nor the training tokens
    (
        "I have 100k samples averaging 1500 tokens, how long to lora llama 3 8b on one A100?",
        dict(samples=100_000, sample_tokens=1500, train_tokens=None, seq_len=None),
    ),
    ("20k samples, 3000 tokens on average, llama 8b full", dict(samples=20_000, sample_tokens=3000)),
    ("20k examples, each sample about 1200 tokens, 8b lora", dict(samples=20_000, sample_tokens=1200)),
    # beside a count of samples, a token count too small for a dataset (or said per sample) is each sample's
    # length, never the run's total; a total said so, or too large for one sample, stays a total
    (
        "how long to qlora qwen2.5-32b on one H100 with 20k samples of 2k tokens?",
        dict(samples=20_000, sample_tokens=2048, train_tokens=None),
    ),
    ("lora mixtral 8x7b on 8 H100, 50k samples of 2k tokens each", dict(samples=50_000, sample_tokens=2048)),
    ("10k examples, 4k tokens each, llama 8b lora", dict(samples=10_000, sample_tokens=4096, train_tokens=None)),
    ("1M conversations of ~1,500 tokens, llama 8b full", dict(samples=1_000_000, sample_tokens=1500, seq_len=None)),
    ("20k samples of 2k tokens with 4k context, llama 8b lora", dict(sample_tokens=2048, seq_len=4096)),
    ("50k samples, 80k tokens in total, 7b lora", dict(samples=50_000, sample_tokens=None, train_tokens=80_000)),
    ("pretrain 1b on 300B tokens, about 100M documents", dict(sample_tokens=None, train_tokens=300 * B)),
    # a served prompt's length: the sequence is it and the output (the default's, said)
    ("prompts of 1500 tokens, llama 8b inference", dict(prompt_tokens=1500, seq_len=None, train_tokens=None)),
    # the servers' RAM is not a GPU's memory, and "GPU RAM" is not the servers'
    ("GPU RAM 24GB enough for 7b lora?", dict(gpu_memory_gib=24, host_ram_gib=None)),
    ("512GB RAM, 8x 4090, 70b qlora", dict(host_ram_gib=512, gpu_memory_gib=None, gpus=8)),
    ("minimum hardware: CPU Intel 20 cores, RAM 32G, GPU GeForce RTX 4080", dict(host_ram_gib=32, gpu="rtx-4080-16gb")),
    ("sample_tokens=1200 samples=10k 8b lora", dict(samples=10_000, sample_tokens=1200)),
    # DPO/PPO with "full": full-parameter alignment; "training a 32B" beside "fine-tuning" is a fine-tune;
    # "or not" asks yes or no, it compares nothing
    ("With full fine-tune chosen, how much GPU memory does DPO training need? qwen-7b", dict(method="dpo")),
    (
        "What's the minimum GPU for fine-tuning the 32B model? I tried training the 32B model on 8 L40 GPUs. "
        "With the 3B model it worked fine. So can the 32B model be trained on 8 L40 GPUs or not?",
        dict(params_b=32, method="full", gpus=8, compare=None),
    ),
    ("train a 2B model on 8 A800 within a month", dict(params_b=2, method="pretrain")),
    # "gradient checkpointing" is recomputation, not checkpoint saving; saving named still is
    (
        "What does gradient checkpointing save for a 7B model at 8k context?",
        dict(params_b=7, not_topics=["checkpoint_slow"]),
    ),
    (
        "gradient checkpointing is on, but saving checkpoints takes 30 minutes for 70b",
        dict(topics=["checkpoint_slow"]),
    ),
    # the network between nodes, named in prose; two named are a choice, not a setting
    ("it is very slow, 100G ethernet between nodes, 4 nodes of 8 A100", dict(fabric="eth-100", nodes=4)),
    ("200Gbps RoCE, 2 nodes of H100, 70b full", dict(fabric="roce-200")),
    ("NDR InfiniBand, 4 nodes, 70b full", dict(fabric="ib-ndr400")),
    ("we have infiniband between our A100 nodes", dict(fabric="ib-hdr200", notes=["fabric_speed_assumed"])),
    ("we have infiniband between our H100 nodes", dict(fabric="ib-ndr400", notes=["fabric_speed_assumed"])),
    ("should we use 100G ethernet or infiniband for 4 nodes?", dict(fabric=None)),
    ("a 100G dataset, 7b lora", dict(fabric=None, dataset_gb=100)),
    # servers named with a GPU type: that many servers of the type's usual size; "8x A100 node" is GPUs
    ("two H100 servers, llama 70b full", dict(gpus=16, nodes=2, notes=["servers_of_usual_size"])),
    ("one 8x A100 80 GB node is not enough for falcon-40b", dict(gpus=8, nodes=1)),
    ("FSDP on a 4xA100(80G) server, llama 70b full", dict(gpus=4, gpu="a100-80gb")),
    ("full parameter continued pretraining of llama 8b", dict(method="continue")),
    ("serve a lora adapter on llama 8b with vllm", dict(method="infer", intent="plan")),
    ("budget of 50k, llama 70b lora", dict(budget_usd=50_000)),
    # comparisons as people put them
    (
        "is it worth upgrading from A100 to H100 for llama 70b lora?",
        dict(compare={"kind": "gpu", "options": ["a100-80gb", "h100-80gb"]}),
    ),
    # sequences served at once are the serving concurrency
    ("we want to serve deepseek-r1 to 200 concurrent users", dict(micro_batch=200, method="infer")),
    ("serve 50 users at once with llama 8b", dict(micro_batch=50, method="infer")),
    ("concurrency of 32 for llama 70b on 2 h100", dict(micro_batch=32, method="infer", gpus=2)),
    ("serve Llama-3.3-70b with vLLM using the full 128k token context window", dict(seq_len=131072, train_tokens=None)),
    # a count after "than" / "compared to" is what the user compares against
    ("--nproc_per_node 8 --nnodes 2 training is slower than 1 node, infiniband", dict(gpus=16, nodes=2)),
    ("compared to 8 GPUs, 16 GPUs is not faster for 7b full", dict(gpus=16)),
    (
        "NCCL error: unhandled system error. 2 nodes over 100G ethernet, 16 A100",
        dict(nodes=2, gpus=16, fabric="eth-100"),
    ),
    # a tokens/s figure is serving unless the question trains
    ("llama 3.1 8b on an L4, how many tokens/s?", dict(model="llama-3.1-8b", method="infer")),
    ("Our 8xH100 node trains llama-3-8b at 3000 tokens/s per GPU, is that normal?", dict(method=None, gpus=8)),
    # the user's words after a log message on the same line are read
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 1.2 GiB is free. llama 70b lora",
        dict(model="llama-3.3-70b", method="lora", gpu_memory_gib=79.15),
    ),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 1.2 GiB is free. Of the allocated memory 76.2 GiB is allocated by PyTorch.",
        dict(model=None, method=None, gpu_memory_gib=79.15),
    ),
    # a question in words with no word of training: serving (a terse request keeps the default)
    (
        "How much VRAM does llama-3-8b need?",
        dict(model="llama-3-8b", method="infer", notes=["no_training_word_serving"]),
    ),
    ("what is the minimum memory to run mixtral 8x7b?", dict(model="mixtral-8x7b", method="infer")),
    ("llama 70b gpus=8", dict(method=None, gpus=8, not_notes=["no_training_word_serving"])),
    ("What does gradient checkpointing save for a 7B model at 8k context?", dict(method=None)),
    # adapters ruled out: the whole model is trained, said back ("without lora" read as a full fine-tune)
    ("llama 8b without lora, how much memory?", dict(method="full", notes=["finetune_read_as_full"])),
    ("I tried to run the nlp example, but fp8 is slower than fp16, why?", dict(method=None)),
    # a GPU quoted as what a model "needs" is set aside with its count; "or" between models weighs no GPUs
    (
        "Running R1 inference needs 8xH100 80GB, and it's very hard to do R1 or V3 inference on a single "
        "consumer GPU (e.g. 24GB 4090)",
        dict(model="deepseek-r1", gpu="rtx-4090-24gb", gpus=1, compare=None),
    ),
    # a GPU the user lacks is no option
    (
        "A100s aren't available to me, could llama-3-8b full fine-tune run on 4xV100 or on T4 gpus?",
        dict(gpu="v100-32gb", gpus=4, compare={"kind": "gpu", "options": ["v100-32gb", "t4-16gb"]}),
    ),
    # setups compared with their own counts; "total" memory is of all the cards
    (
        "2x 3090 (48GB total) vs 1x 4090 for llama-3-8b qlora?",
        dict(
            gpu="rtx-3090-24gb",
            gpus=2,
            gpu_memory_gib=None,
            compare={
                "kind": "gpu",
                "options": ["rtx-3090-24gb", "rtx-4090-24gb"],
                "counts": {"rtx-3090-24gb": 2, "rtx-4090-24gb": 1},
            },
        ),
    ),
    # cards of different types together are one setup, planned as the one with the least memory
    (
        "I have a 3090 and a 4090, can I fine-tune llama-3-8b with lora?",
        dict(gpu="rtx-3090-24gb", gpus=2, compare=None, notes=["mixed_gpus"]),
    ),
    ("2x A100 + 2x A6000, llama-2-13b lora", dict(gpu="rtx-a6000-48gb", gpus=4, notes=["mixed_gpus"])),
    ("we have 8 A100 and 8 H100, which is faster for llama-3-8b?", dict(intent="compare", not_notes=["mixed_gpus"])),
    # "full" of a version, a model or the data is no full fine-tune
    (
        'We intend to put the DeepSeek-R1 "full version" into production, how many H100?',
        dict(model="deepseek-r1", method="infer"),
    ),
    ("qwen 7b full model, lora on my data", dict(method="lora")),
    # cards added to the catalog: workstation, GeForce, China and laptop names, none shadowing another
    ("can a 4070 super run llama-3-8b?", dict(model="llama-3-8b", gpu="rtx-4070-super-12gb", gpus=1)),
    ("llama-3-8b inference on an RTX 4070", dict(model="llama-3-8b", method="infer", gpu="rtx-4070-12gb")),
    ("qwen2.5-14b lora on 2x RTX 5000 Ada", dict(model="qwen2.5-14b", method="lora", gpu="rtx-5000-ada-32gb", gpus=2)),
    ("7b qlora on an RTX A4500", dict(params_b=7, method="qlora", gpu="rtx-a4500-20gb")),
    ("serve qwen2.5-7b on a 4060 Ti", dict(model="qwen2.5-7b", method="infer", gpu="rtx-4060ti-8gb")),
    ("my RTX 3070 Ti: can it run qwen2.5-3b inference?", dict(model="qwen2.5-3b", gpu="rtx-3070ti-8gb", gpus=1)),
    (
        "4 x RTX 5090 D for llama-3.1-70b qlora",
        dict(model="llama-3.1-70b", method="qlora", gpu="rtx-5090d-32gb", gpus=4),
    ),
    ("RTX 4090 Laptop, lora on llama-3-8b", dict(model="llama-3-8b", method="lora", gpu="rtx-4090-laptop-16gb")),
    ("Qwen2.5-72B-Instruct-AWQ on 2 A100, how many users?", dict(model="qwen2.5-72b", precision="int4")),
    # offload is read on its own ("NVMe offload" was read only beside another training option's word)
    ("Is NVMe offload a good idea for 70B full fine-tuning on 8 A100?", dict(offload="nvme", gpus=8)),
    # "what network" asks which network; "how many tokens per second" is no token budget
    ("What network do I need between 8 nodes for pretraining a 13B model?", dict(topics=["network_choice"])),
    (
        "How many tokens per second can I expect serving Llama 3.1 8B on one H100 with vLLM?",
        dict(method="infer", not_topics=["chinchilla_tokens"]),
    ),
    ("Can I run DeepSeek-R1-Distill-Qwen-7B on a MacBook?", dict(unknown=["macbook"], gpu=None)),
    # a bound ("9 or more") yields to a setup written out; servers "with 8 ... on each"; a card named
    # again with its memory is that card
    (
        "I would like to run DeepSeek-V3 671B inference on 9 or more H100s. I have two nodes, each with 8 H100s.",
        dict(model="deepseek-v3", gpus=16, nodes=2),
    ),
    (
        "I have two gpu server with 8 T4 16GB GPU on each. how could I run llama3 70b inference?",
        dict(gpu="t4-16gb", gpus=16, nodes=2),
    ),
    (
        "Can I infer llama v2 70b on single gpu nvidia v100?\nGpu: Nvidia v100 16GB",
        dict(gpu="v100-16gb", gpus=1, not_notes=["set_aside"]),
    ),
    ("fine-tuning llama-2-13b on 3 A100 and the loss shows up as nan", dict(topics=["loss_instability"])),
    ("adding gpus always makes training slower, 7b full", dict(topics=["scaling_efficiency"])),
    # a served sequence's prompt and output, and where its prompt is prefilled: settings and prose
    ("llama-3-70b infer prompt=5000 prefill=disaggregated", dict(prompt_tokens=5000, prefill="disaggregated")),
    ("serve llama 3 70b with 5000-token prompts", dict(method="infer", prompt_tokens=5000, seq_len=None)),
    ("llama 3 70b inference input 2048 output 128", dict(method="infer", prompt_tokens=2048, seq_len=2176)),
    ("serve qwen3-235b on h200, ISL 1k OSL 8k", dict(prompt_tokens=1024, seq_len=9216, gpu="h200-141gb")),
    ("deepseek-v3 serving at 1k/1k on 8 H200", dict(prompt_tokens=1024, seq_len=2048, gpus=8)),
    ("serve 70b, ISL/OSL 1000/1000", dict(prompt_tokens=1000, seq_len=2000)),
    ("serve llama 70b 2048 input / 128 output tokens", dict(prompt_tokens=2048, seq_len=2176)),
    ("serve llama 70b with prefill/decode disaggregation", dict(method="infer", prefill="disaggregated")),
    ("deepseek-v3 on 16 H100 with PD separation", dict(prefill="disaggregated", gpus=16)),
    ("vllm chunked prefill for llama 3 8b", dict(method="infer", prefill="chunked")),
    # a prompt no shorter than the context pasted beside it: the context stands, the prompt is set aside
    (
        "serve llama 3 8b with max_model_len 10240, input length 50000 tokens",
        dict(seq_len=10240, prompt_tokens=None, notes=["set_aside"]),
    ),
    # in a training question "prompts of N tokens" stay the samples' length
    ("fine-tune 7b on 10k prompts of 1500 tokens", dict(prompt_tokens=None, sample_tokens=1500, samples=10_000)),
    # the KV cache's element type: a setting, prose, a pasted flag
    ("llama-3.1-70b infer gpu=h100 gpus=2 kv=fp8", dict(kv_cache="fp8", precision=None)),
    ("llama 70b inference on 2 H100 with fp8 kv cache", dict(kv_cache="fp8", precision=None)),
    (
        "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 2 --kv-cache-dtype fp8 on 2 H100",
        dict(kv_cache="fp8", tp=2),
    ),
    ("llama-3.1-70b infer kv=fp4", dict(errors=["bad_value"])),
    # a card said again in the user's own clause counts there ("we are running ... on MI300Xs/MI325Xs")
    (
        "MI300X vs H100 conv performance\nwe are running a model on MI300Xs/MI325Xs and see poor convolutions",
        dict(gpu="mi300x-192gb"),
    ),
    (
        "Would it work on a Nvidia Jetson AGX Orin platform? llama 7b inference",
        dict(gpu=None, unknown=["jetson agx orin"]),
    ),
    # a family with a bare number: billions when a model of that size exists, else millions
    ("Do you recommend train mpt125 only with `4800 ba`?", dict(model="mpt-125m")),
    ("pythia 410 full finetune", dict(params_b=None)),  # no Pythia-410M in the catalog: not a 410B model
    # a count of cards asked with the number of machines is one machine's: the job's count is open
    ("how many 8xH100 nodes do I need to full finetune llama 70b", dict(gpu="h100-80gb", gpus=None)),
    ("full finetune llama 70b, how many nodes of 8 H100?", dict(gpus=None)),
    # an MoE's active size is its own reading, not a second model's; the word for parameters before a size
    ("train a 1T MoE with 32B active on 1024 H100", dict(params_b=1000, active_params_b=32, gpus=1024)),
    ("pretrain a 235B-A22B model", dict(params_b=235, active_params_b=22)),
    # the count times the memory after a card's name is the count ("A10(4* 24GB)" had planned 64)
    ("how to train qwen2.5-32b with A10(4* 24GB)", dict(gpu="a10-24gb", gpus=4)),
    ("train qwen2.5-32b with A100 (8*80GB)", dict(gpu="a100-80gb", gpus=8)),
    ("lora on 3090 (2*24G)", dict(gpu="rtx-3090-24gb", gpus=2)),
    ("RTX4090 24Gx2张 lora 7b", dict(gpu="rtx-4090-24gb", gpus=2)),
    ("you mentioned 8 H100 in the blog post, we have 2 A100 80GB, lora 13b", dict(gpu="a100-80gb", gpus=2)),
    # "full" before a length is the length's, not the method ("with full 8K context using LoRA")
    ("fine-tuning Llama 3 8B with full 8K context using LoRA on 1 A100 80GB", dict(method="lora", seq_len=8192)),
    ("llama 8b full 8k", dict(method="full", seq_len=8192)),
    # a prompt's and a response's lengths written apart: a sequence holds both
    ("PPO of a 72B model on 32 nodes. Prompt length: 40K tokens, response length: 10K tokens", dict(seq_len=51_200)),
    # thousands of cards after a word that puts the job on them; "8k" alone may be a context
    ("train a 405b on 16k H100", dict(gpus=16_000)),
    ("pretrain 70b with 100k H100s, 15T tokens", dict(gpus=100_000)),
    ("llama 8b 8k a100 lora", dict(gpus=None, seq_len=8192)),
    # workers, hosts and instances each with their GPUs are machines
    ("I fully finetune TinyLlama with FSDP on three workers each with two GPUs.", dict(gpus=6, nodes=3)),
    ("2 hosts with 8 GPUs each, llama 70b lora", dict(gpus=16, nodes=2)),
    ("num_workers 4 with 8 GPUs lora 7b", dict(gpus=8, nodes=None)),
    # the count in the sentence that asks, over one in a statement no more the user's own
    (
        "One H100 will oom when using megatron to train llama2-70b. How to use two H100 to train llama2-70b?",
        dict(gpus=2, model="llama-2-70b"),
    ),
    # a command found for other cards is someone else's setup; DeepSeek V3.2 has V3's shape
    (
        "How to run DeepSeek-V3.2 on 2 H100 nodes?\nI only found the cmd for H200/B200:\n"
        "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8",
        dict(model="deepseek-v3", gpu="h100-80gb", nodes=2, gpus=16),
    ),
    # a gap before 我 starts the user's own clause after a quoted setup
    # an OOM with no word of training is a model that does not load: serving
    ("I tried the fp8 version, why is it slower than bf16 on H100?", dict(method=None)),
    # a size with its unit after a family the catalog lacks is that model's size, also before the name
    ("pythia 410m lora", dict(params_b=0.41, method="lora")),
    ("opt 350m lora on a T4", dict(params_b=0.35)),
    ("a 410m pythia lora", dict(params_b=0.41)),
    ("mpt7 lora", dict(model="mpt-7b")),
    # an id that carries the written size wins over a newer model of about that size
    ("llama 405 inference on 16 h100", dict(model="llama-3.1-405b")),
    ("llama 400b inference", dict(model="llama-4-maverick")),
    # data times passes, worked out, is tokens, not a 1B model
    (
        "on an L40 48G, I think the 1B * 8 epoches = 8B tokens will take more than 8 hours",
        dict(params_b=None, train_tokens=8 * B, gpu="l40-48gb"),
    ),
    ("7b x 3 epochs lora", dict(params_b=7, epochs=3, method="lora")),
    # a model that shows the same thing too is a side mention
    (
        "I fine-tune llama 13b on 2 A100 and it OOMs. Any idea why the same thing happens with mistral 7b?",
        dict(model="llama-1-13b"),
    ),
    # more than one model on one GPU is sharing it
    (
        "Can NVIDIA support running more than one model inference from one GPU",
        dict(topics=["mig_multitenant"], method="infer"),
    ),
    ("fine-tune 2 models on a gpu cluster", dict(not_topics=["mig_multitenant"])),
    ("how many NVIDIA Tesla V100S GPUs did the pretraining use?", dict(gpu="v100s-pcie-32gb")),
    ("8 V100s for 13b lora", dict(gpu="v100-32gb", gpus=8)),
    # a latency is a serving figure; a network's is the network's
    ("first token latency of qwen 7b on an L4", dict(method="infer", topics=["inference_deployment"])),
    (
        "IB latency between nodes for llama 70b pretraining",
        dict(method="pretrain", topics=["network_choice"], not_topics=["inference_deployment"]),
    ),
    # a card the catalog lacks, its memory written: planned as a card of that memory, and said
    (
        "Can any one run GPT OSS 120B successful with 4 GPU Mi50 16GB with vllm ?",
        dict(gpu=None, gpus=4, gpu_memory_gib=16, unknown=["mi50"], model="gpt-oss-120b"),
    ),
    ("8x H100 PCIe for 70b lora", dict(gpu="h100-pcie-80gb", gpus=8)),
    # "full" before a noun of its own is no method ("full document capabilities")
    (
        "concurrent request capacity of an A100 80GB with Llama-2-13b with full document capabilities",
        dict(method="infer", model="llama-2-13b"),
    ),
    # fifth fresh batch: a count after the memory, a memory the catalog's card lacks, RL algorithms,
    # a GPU named after a one-line command, symptoms of a NaN gradient, a hang, no speed-up
    ("RTX 4090 24GBx4 lora qwen2.5 32b", dict(gpu="rtx-4090-24gb", gpus=4)),
    ("serving glm-4.5 on 8 x H20 (141GB)", dict(gpu="h20-96gb", gpus=8, gpu_memory_gib=141)),
    ("how many GPUs for RLOO or REINFORCE++ on qwen2.5 72b?", dict(method="ppo", model="qwen2.5-72b")),
    ("DAPO training of qwen3 8b, how many H100?", dict(method="ppo", gpu="h100-80gb")),
    ("swift rlhf --rlhf_type grpo --model Qwen/Qwen2.5-7B-Instruct on 8 A100", dict(method="ppo", gpus=8)),
    (
        "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 3.3e-10, 'epoch': 2.0} full sft of qwen3 4b",
        dict(intent="troubleshoot", topics=["loss_instability"]),
    ),
    ("multi-gpu lora of qwen2.5 7b shows no progress after loading the data", dict(topics=["nccl_timeout"])),
    # a link's letters are no symptom ("https" is no "tps")
    (
        "qlora of chatglm2-6b needs much more memory than chatglm-6b, code: https://github.com/x/y why?",
        dict(topics=["oom_large_model"], not_topics=["inference_deployment"]),
    ),
    ("should we buy our own gpus or rent in the cloud to fine-tune llama 70b?", dict(topics=["gpu_choice_a100_h100"])),
    # vision-language models: their own catalog entries, a family size counting the vision encoder
    ("llava-v1.5-13b full finetune on 8 A100 40G", dict(model="llava-1.5-13b", gpu="a100-40gb", gpus=8)),
    ("internvl2 26b lora on 2 H100", dict(model="internvl2-26b", method="lora")),
    ("minicpm-v 2.6 lora on a 4090", dict(model="minicpm-v-2.6", gpu="rtx-4090-24gb")),
    # the quality of a model's answers is outside gpuplan's field
    ("after gptq quantization of qwen2 72b the answers are much worse on 4x 4090, why?", dict(intent="other")),
    ("Finetuned Llama 3.1 8B gets stuck in a loop: it starts to repeat itself", dict(intent="other")),
    # a card the catalog names only with its memory, the memory written first; alone, nothing said of it
    ("16GB VRAM 5060 TI, can I lora qwen 7b?", dict(gpu="rtx-5060ti-16gb", gpus=1)),
    ("two 16GB 5060 Ti cards, lora qwen 7b", dict(gpu="rtx-5060ti-16gb", gpus=2)),
    ("5060 TI, can I lora qwen 7b?", dict(gpu=None, not_notes=["unsupported_hardware"])),
    # the numbers written are the name's: "internvl 38b" is not InternVL3 8B (both fold to "internvl38b")
    ("internvl 38b serving with lmdeploy", dict(model="internvl3-38b")),
    ("internvl3 8b serving with lmdeploy", dict(model="internvl3-8b")),
    # a model and a method in a few words is the command's own form, whatever the classifier leans to
    ("mixtral 8x7b lora", dict(model="mixtral-8x7b", method="lora", intent="plan")),
    # the expert's size times the experts, written the other way round, is the MoE's own name
    ("Mixtral-7B*8 全参微调需要多少卡", dict(model="mixtral-8x7b", method="full")),
    ("mixtral 7b x 8 lora on 4 A100", dict(model="mixtral-8x7b", method="lora", gpus=4)),
    ("2 nodes with totally 16 gpus, llama 70b full", dict(gpus=16, nodes=2)),
    ("lora of qwen 7b on 8 gpus is slower than on one gpu", dict(intent="troubleshoot", topics=["scaling_efficiency"])),
    # an Inferentia or Trainium instance is hardware gpuplan cannot size, said back
    (
        "deploy llama 3 70b on inf2.48xlarge EC2 instance",
        dict(notes=["unsupported_hardware"], unknown=["inf2.48xlarge"]),
    ),
    # a run already measured is the baseline; the setup asked about is the other one
    (
        "the run on 8 V100 took 20 hours, how long would 4 H100 need for the same llama 7b lora?",
        dict(gpu="h100-80gb", gpus=4),
    ),
    # counts: "8 GPU A100 server" is one server of 8, "two 8 A100 servers" two of 8, "8 card x 16GB" each card
    ("8 GPU A100 server, full fine-tune of a 13b model", dict(gpu="a100-80gb", gpus=8)),
    ("cuda 12.0\ngpu NVIDIA A100-SXM4-80GB\nfull finetune of llama-7b gives OOM", dict(gpu="a100-80gb", gpus=None)),
    ("I have two gpu server with 8 T4 16GB GPU on each, inference llama3 70b", dict(gpus=16, nodes=2)),
    (
        "two 8 A100 Server have a slower speed than one 8 A100 Server, mixtral-8x7B lora",
        dict(gpus=16, nodes=2, intent="troubleshoot", topics=["scaling_efficiency"]),
    ),
    (
        "ZeRO-3 offload is very slow (6 machine x 8 card x 16GB) for qwen2.5-vl-72b",
        dict(gpus=48, nodes=6, gpu_memory_gib=16),
    ),
    ("when I increase the number of machines, the eta increased; 64 GPUs", dict(topics=["scaling_efficiency"])),
    # a count said to be the whole wins over the parts written before it
    (
        "8xH100 for actor + ref and 8 others for critic and 16 for vllm actors, so a total of 32xH100s for this run?",
        dict(gpu="h100-80gb", gpus=32, method="ppo"),
    ),
    (
        "I'm using A100 80G (1 node with 8 gpus), then I need 4 nodes with totally 32 gpus for 70b ppo?",
        dict(gpus=32, nodes=4),
    ),
    ("how much memory does the critic model of a 7b ppo run need", dict(method="ppo")),
    # a training framework named: its memory habits (knowledge/frameworks.yaml); "LLaMA-Factory" names no model
    (
        "llama 3.1 70b full fine-tune with torchtune on 8 A100 with cpu offload",
        dict(model="llama-3.1-70b", framework="torchtune", offload="cpu"),
    ),
    (
        "LLaMA-Factory qlora 70b on 2x4090",
        dict(params_b=70, method="qlora", framework="llama-factory", not_notes=["unknown_model_name"]),
    ),
    ("qlora llama-2-7b with Answer.AI's fsdp_qlora on two 3090s", dict(framework="answerai-fsdp-qlora", gpus=2)),
    ("lora qwen2.5-7b with ms-swift", dict(model="qwen2.5-7b", framework="ms-swift")),
    ("pretrain 7b on 1T tokens with Megatron-LM", dict(params_b=7, framework="megatron")),
    ("axolotl lora llama 3 8b", dict(model="llama-3-8b", framework="axolotl")),
    ("sft llama 3 8b lora with TRL's SFTTrainer", dict(model="llama-3-8b", framework="hf-trainer")),
    ("unsloth lora qwen2.5 7b on a 4090", dict(model="qwen2.5-7b", framework="unsloth")),
    # a repository of the framework's checkpoints, a verb and a serving engine name no training framework
    ("unsloth/llama-3-8b-bnb-4bit lora on a 4090", dict(model="llama-3-8b", framework=None)),
    ("how to accelerate 7b lora training", dict(framework=None)),
    ("serve llama 70b with vllm", dict(framework=None, notes=["framework_noted"])),
    ("llama-factory with deepspeed zero3 lora 70b", dict(framework="llama-factory", zero=3, notes=["set_aside"])),
    ("lora 7b framework=LLaMA-Factory", dict(framework="llama-factory")),
    # an RL framework or a module named for its algorithm names the method; so does 'RL'
    (
        "how to train use 2 * 2 * A100? new to verl and ray; I can train a 1.5B model on 1 node",
        dict(method="ppo", gpus=4),
    ),
    ("python3 -m openrlhf.cli.train_ppo_ray --actor_num_gpus_per_node 8", dict(method="ppo")),
    ("Recommendations for multi-node training of a 7B model with RL", dict(method="ppo", params_b=7)),
    # the other model of "in the same way as" is a reference, not the one asked about
    (
        "multi-node training of a 7B model with RL.\nIs it necessary to launch in the same way as the 70B model?",
        dict(params_b=7),
    ),
    # the top of a range or a bound of tokens is the length; a bound on the data is not
    ("generations are long context up to 16-32k tokens, 7b on 8 H100", dict(seq_len=32768)),
    ("we have up to 500k tokens of data, lora 7b", dict(seq_len=None)),
    # "the full 300B tokens" is all the data, no full fine-tune; that many tokens and no method word: pretraining
    ("recommended training settings for GPT-2 small on the full 300B tokens with 4 GPUs", dict(method="pretrain")),
    ("take BERT-large and continue training it with a custom new corpus, how long?", dict(method="continue")),
    ("GPU utilisation drop between epochs, 8 A100", dict(intent="troubleshoot", topics=["gpu_starved_io"])),
    (
        "Fine-tuning Qwen2.5-0.5B with batch size 4. After 20 steps, eval gets NaN, and NaN afterwards.",
        dict(topics=["loss_instability"]),
    ),
    # a memory written without a count is one card of it, unless cards are spoken of in the plural
    ("can I lora qwen 7b with 24GB VRAM?", dict(gpus=1, gpu_memory_gib=24)),
    ("can this be fine-tuned with 24GB GPUs, llama 7b", dict(gpus=None)),
    # generation that never stops is the model's output, outside gpuplan's field
    ("Qwen3 not stopping generation after lora finetuning, A100 80GB", dict(intent="other")),
    ("I try to finetune llama-3 8B on a A100/40GB, but it is out of memory", dict(gpu="a100-40gb")),
    # an x glued between a card's name and its memory is a separator; after a bare count it stays the count's
    ("Testing Machine: 8x4090x24GiB\nTesting Model: DeepSeek-R1-Distill-Qwen-32B", dict(gpu="rtx-4090-24gb", gpus=8)),
    ("8x24GB lora 13b", dict(gpus=8, gpu_memory_gib=24)),
    # what a model uses is no card's memory
    ("I want to buy 2x3060 12gb to run llama 30b 4bit, which uses 20gb gpu memory", dict(gpu_memory_gib=None, gpus=2)),
    # found in review: "total" words only of several cards; a one-digit card name before its memory
    ("24GB VRAM totally enough for llama 7b lora?", dict(gpu_memory_gib=24, gpus=1)),
    ("Can a 24GB card in all cases run llama 13b qlora?", dict(gpu_memory_gib=24)),
    ("2x T4x16GB, qlora llama 7b", dict(gpu="t4-16gb", gpus=2)),
    ("my fine-tuned llama 7b model doesn't stop generating", dict(intent="other")),
    ("2x A100 + 2x A6000, llama-2-13b lora", dict(gpus=4, intent="plan")),  # one mixed setup, whatever a refit says
    ("up to 1M tokens of pretraining, 7b", dict(seq_len=None)),
    # an RL framework says which training a bare "train a 7b model" is
    ("How many GPUs do I need to train a 7b model using verl?", dict(method="ppo", params_b=7)),
    ("How many GPUs do I need to train a 7b model?", dict(method="pretrain")),
    # a length after "per" is a rate's unit; ExLlamaV2's bits per weight are a quantised model served
    (
        "A 34b model at 4.0bpw is ~17GB. How much additional VRAM per 1k context? I have a 4090 and use 16k context",
        dict(seq_len=16384, method="infer", precision="int4", gpu="rtx-4090-24gb"),
    ),
    ("llama 70b 6.0bpw exl2 on 2x3090", dict(method="infer", precision="int8", gpus=2)),
    # torchtitan's flavour names of Llama 4
    ("Minimum number of GPUs needed to pretrain llama4_17bx16e - 8 ?", dict(model="llama-4-scout", method="pretrain")),
    # the fourteenth batch: "pre-trained" describes a model, it does not train one
    ("fine-tune a pre-trained llama 7b model on 2 a100", dict(method="full", gpus=2)),
    ("a chatbot on the pre-trained 3B model, 10 short answers per second", dict(params_b=3, method=None)),
    ("model = AutoModel.from_pretrained('llama-7b') OOM on a 4090", dict(method=None)),
    # users a service is for, none said to be at once: all of them at once, said in the answer
    ("serve llama 70b for 32 users", dict(method="infer", micro_batch=32, notes=["users_as_concurrency"])),
    ("serve llama 8b, 100 concurrent requests", dict(micro_batch=100, not_notes=["users_as_concurrency"])),
    # the fifteenth batch: a length's label with a comparison or 'to' before its value; a range's top
    ("finetune an 8B model using the data with context_len > 50000, is 8 x 40GB A100 sufficient?", dict(seq_len=50000)),
    ("is 16 H100 enough if I keep the max_seq_len to 32768", dict(seq_len=32768, gpus=16)),
    ("generations are long context up to 16-32k tokens", dict(seq_len=32768)),
    ("scale the context length to 32 GPUs", dict(seq_len=None, gpus=32)),
    ("seq len at 64 nodes", dict(seq_len=None, nodes=64)),
    ("context 32k-64k", dict(seq_len=32768)),
    # users are concurrency only when the question is serving, and what is said to be at once wins
    ("fine-tune llama 7b for 20 people, batch size 4", dict(micro_batch=4, not_notes=["users_as_concurrency"])),
    ("serve qwen 7b for 2000 users, 100 at once", dict(micro_batch=100, not_notes=["users_as_concurrency"])),
    ("serve qwen 7b for 500 users per day", dict(not_notes=["users_as_concurrency"])),
    # the sixteenth batch
    (
        "### Env\nGPU: 1x3090\nRAM: 32GB\ntrain with return code = -9",
        dict(gpus=1, gpu="rtx-3090-24gb", topics=["offload_host_ram"]),
    ),
    (
        "I want to convert a 70b llama to trt engine, I tried --enable_context_fmha=True  and --max_batch_size=1, but"
        " it fails",
        dict(params_b=70, method="infer"),
    ),
    ("lora llama 70b on 16 a100, I want to have a max length of 4096.", dict(seq_len=4096)),
    (
        "sample: https://github.com/x/y/blob/main/ds_pretrain_gpt_1.3B.sh, changed the model size into 7b",
        dict(params_b=7),
    ),
    ("3090 steps of training on 8 a100", dict(gpu="a100-80gb", gpus=8)),
    ("How long would training take on a Nvidia 1080Ti GPU", dict(gpu="gtx-1080ti-11gb", gpus=1)),
    (
        "GPU is at maybe 40% usage while one CPU thread is at 100%, underfeeding the GPU",
        dict(topics=["gpu_starved_io"]),
    ),
    ("the model freezes (stuck) when using 4 or more GPUs; NCCL_P2P_DISABLE=1 fixes it", dict(topics=["nccl_timeout"])),
    ("llama 70b build engine OOM with tp_size 4", dict(method="infer")),
    ("LoRA llama 3 8b with max_len 1650 on an A100", dict(gpu="a100-80gb", seq_len=1650)),
    ("the dataset has 1650 files, fine-tune llama 3 8b on 8 A100", dict(gpu="a100-80gb", gpus=8)),
    ("What is the H100 tokens/s for serving llama 3 70b?", dict(gpu="h100-80gb")),
    ("GPU memory shows 80% usage during lora finetune of llama 3 8b on A100", dict(not_topics=["gpu_starved_io"])),
    (
        "I want to LoRA https://huggingface.co/Qwen/Qwen2-72B on 4 A100, it is like Qwen2 7B but bigger",
        dict(model="qwen2-72b"),
    ),
    ("- GPU type: 8x Tesla V100\nfull fine-tune llama 13b", dict(gpus=8)),
    # a form factor between a card's name and its memory; a memory written apart from the card
    # that no variant of it has is something else's (what a model needs), not the card's
    ("GPU type: NVIDIA A800-SXM4-40GB, qwen2-72b full sft", dict(gpu="a800-40gb", gpu_memory_gib=None)),
    (
        "The model needs about 13GB of VRAM in fp16, can I use a Tesla P40?",
        dict(gpu="p40-24gb", gpu_memory_gib=None),
    ),
    (
        "I plan to buy two RTX 3060 12GB to serve a 4-bit 30b that takes 20GB of VRAM",
        dict(gpu="rtx-3060-12gb", gpus=2, gpu_memory_gib=None),
    ),
    ("llama 7b lora on my A100, memory of 40GB", dict(gpu="a100-80gb", gpu_memory_gib=40)),
    ("a V100 server, 8 cards, vram 16GB per card, train 7b", dict(gpu="v100-32gb", gpu_memory_gib=16, gpus=8)),
    ("my 3090 uses 20GB VRAM when running llama 8b", dict(gpu_memory_gib=None, not_notes=["memory_apart_from_card"])),
    ("8x V100 32GB, and I have 32GB of VRAM per card", dict(gpu="v100-32gb", not_notes=["memory_apart_from_stated"])),
    ("serve `someorg/brand-30B-A3B-Instruct` on 2 H100", dict(params_b=30, active_params_b=3, gpus=2)),
    (
        "What DeepSpeed version supports ZeRO++ for llama 70b on 16 H100?",
        dict(gpus=16, not_notes=["no_training_word_serving"]),
    ),
    # what a training made, named as a thing, beside a serving word is served; a training job is not
    ("Throughput degradation when serving llama-2-7b with a single LoRA adapter on A100 40 GB", dict(method="infer")),
    ("I want to finetune a lora model of llama 7b and then serve it", dict(method="lora")),
    ("Can I run the fine-tuned model on a single 3090?", dict(method="infer", gpus=1)),
    # a method read from a weak word only ("train a 70B") yields to a pasted script's or flag's
    (
        "How much RAM is required to train a 70B Llama2 model with two 80G A800 nodes?\n"
        'File "/tmp/ray/working_dir/examples/train_ppo_ray.py", line 289, in <module>\n'
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
        dict(method="ppo", nodes=2),
    ),
    (
        "1. add --use_lora parameter\n2. change --deepspeed parameter\nfinetune llama 7b OOM on 2 16G A4000",
        dict(method="lora"),
    ),
    # billions of training tokens and no method named: a pretraining run's size, said
    (
        "training takes longer than the paper said: on one L40 100 iterations of 4096 tokens take 37.8 s, "
        "so 8B tokens will take far more than 8 hours",
        dict(method="pretrain", train_tokens=8e9, gpus=1, notes=["tokens_read_as_pretraining"]),
    ),
    (
        "fine-tune qwen 7b on 2B tokens, how long on 8 H100?",
        dict(method="full", not_notes=["tokens_read_as_pretraining"]),
    ),
    # no count is read inside a link (an anchor "two-h208-nodes" had read 208 nodes)
    (
        "serving deepseek v3 failed, I followed https://github.com/sgl-project/sglang/tree/main/benchmark/"
        "deepseek_v3#example-serving-with-two-h208-nodes",
        dict(model="deepseek-v3", nodes=None, gpus=None),
    ),
    # a Hugging Face id a sentence quotes in backticks is the model, sized from its name offline
    ("using the `EleutherAI/pythia-12b` as the base model on 8 x A100", dict(params_b=12, gpus=8)),
    ("Benchmarks on 2xA6000 Ada vs 2xA100 80GB (roughly same speed)", dict(gpu="rtx-6000-ada-48gb", gpus=2)),
    ("How much do you cost on fine-tune starcoder? santacoder fit on a V100?", dict(model="starcoder-15b")),
    # a size written right after a catalog name in a paste is another model's (StarCoderBase 3B is not 15B)
    ("python serve.py --model bigcode/starcoderbase-3b", dict(model=None, params_b=3)),
    ("ollama run starcoder:1b 4GB VRAM enough?", dict(model=None, params_b=1)),
    # a weak serving word does not yield to a pasted adapter flag; a variable after a switch is no "on"
    (
        "concurrency 100, how many A100?\n```\npython -m vllm.entrypoints.openai.api_server --model "
        "Qwen2-72B-Instruct-AWQ --quantization awq --enable-lora --tensor-parallel-size 2\n```",
        dict(method="infer"),
    ),
    ("train llama 7b with --lora_enable ${USE_LORA} on 2 A100", dict(not_notes=["read_setting"])),
    # adapters a serving engine loads are served, not trained
    (
        "```\nvllm serve meta-llama/Llama-2-7b-hf --enable-lora --lora-modules sql=/x/sql\n```\n"
        "throughput drops with the adapter on A100 40GB",
        dict(method="infer", model="llama-2-7b"),
    ),
]

ZH = [
    # from the eleventh batch and this session's probes: per-machine counts, MoE sizes, clause gaps, serving
    # the twelfth batch: a size asked about as tokens is none; a setup the maintainer wrote is theirs
    ("GRPO训练qwen2.5-7b，输入长度2048，输出长度4096，需要几张卡", dict(seq_len=6144, method="ppo")),
    # a served sequence's prompt and output, and where its prompt is prefilled
    ("部署 llama 3 70b，输入2000输出500", dict(method="infer", prompt_tokens=2000, seq_len=2500)),
    ("部署 qwen3-235b，输入 4k token，输出 1k token", dict(method="infer", prompt_tokens=4096, seq_len=5120)),
    ("推理服务 llama 3 70b，输入长度8000，输出长度1000", dict(method="infer", prompt_tokens=8000, seq_len=9000)),
    ("部署deepseek-v3，prefill/decode 分离", dict(method="infer", prefill="disaggregated")),
    ("PD分离部署 qwen3-235b，16张H100", dict(method="infer", prefill="disaggregated", gpus=16)),
    ("部署 llama 3 70b，用分块预填充", dict(method="infer", prefill="chunked")),
    ("请问10B是指token的数量吗？如果要continue pretraining 13B这个规模的模型，大概需要多少卡", dict(params_b=13)),
    (
        "我看您在里面写到6卡H800 25h就可以完成sft过程，我这边使用2卡A800理论上75小时能够完成训练",
        dict(gpu="a800-80gb", gpus=2),
    ),
    ("8卡H100训练qwen3-32b全参需要几台", dict(gpu="h100-80gb", gpus=None, nodes=None)),
    ("需要几台8卡A800服务器才能全参微调72b", dict(gpu="a800-80gb", gpus=None)),
    ("8张A100需要几台机器", dict(gpus=8)),  # 张 counts the job's cards
    ("2台8卡A100全参72b够吗", dict(gpus=16, nodes=2)),
    ("总参数1T、激活32B的MoE模型预训练要多少卡", dict(params_b=1000, active_params_b=32, method="pretrain")),
    ("参数量 70B 的模型全参微调", dict(params_b=70, active_params_b=None)),
    (
        "官方给出的设备 8 * Nvidia A800 80 GB + DeepSpeed  我想问是否能用 nvidia 4090 24GB 进行lora微调",
        dict(gpu="rtx-4090-24gb", method="lora"),
    ),
    ("webglm10B 是否支持双卡24G的2张？结果报显存不足；单卡要多少G才够？", dict(method="infer", gpus=2)),
    ("700亿 全参微调", dict(params_b=70, method="full")),
    ("70亿模型全量微调", dict(params_b=7, method="full")),
    ("1.5万亿参数模型预训练", dict(params_b=1500, method="pretrain")),
    ("我们想用QLoRA微调一个33B的模型，单卡48G够吗？", dict(params_b=33, method="qlora", gpus=1, gpu_memory_gib=48)),
    ("2台8卡A800能全参训练70B吗", dict(params_b=70, method="full", gpu="a800-80gb", nodes=2, gpus=16)),
    ("2机16卡H800训练70b", dict(params_b=70, gpu="h800-80gb", nodes=2, gpus=16)),
    ("两台8卡H100全参微调llama3 70b", dict(model="llama-3-70b", method="full", gpu="h100-80gb", nodes=2, gpus=16)),
    ("单机8卡A100跑70b lora", dict(params_b=70, gpus=8, gpu="a100-80gb", method="lora")),
    ("8张卡还是喂不满怎么办", dict(gpus=8, intent="troubleshoot", topics=["gpu_starved_io"])),
    ("GPU利用率只有30%，数据加载很慢", dict(intent="troubleshoot", topics=["gpu_starved_io"])),
    ("全参微调70B显存总是爆", dict(params_b=70, method="full", intent="troubleshoot", topics=["oom_large_model"])),
    ("70b 全参微调 显存爆了", dict(params_b=70, method="full", topics=["oom_large_model"])),
    ("多节点网络怎么选，IB还是RoCE", dict(intent="compare", topics=["network_choice"])),
    ("A100和H100怎么取舍", dict(topics=["gpu_choice_a100_h100"])),
    (
        "A100还是H100，13b全参微调",
        dict(
            params_b=13, method="full", intent="compare", compare={"kind": "gpu", "options": ["a100-80gb", "h100-80gb"]}
        ),
    ),
    ("训练好了怎么全球上线", dict(topics=["inference_deployment"])),
    ("想用MIG把H100切成多个实例做灰度", dict(gpu="h100-80gb", topics=["mig_multitenant"])),
    ("loss震荡不收敛怎么办", dict(intent="troubleshoot", topics=["loss_instability"])),
    ("训练到一半loss变成nan", dict(topics=["loss_instability"])),
    ("卡数加倍但吞吐不涨", dict(intent="troubleshoot", topics=["scaling_efficiency"])),
    ("多机训练NCCL超时", dict(intent="troubleshoot", topics=["nccl_timeout"])),
    ("保存检查点太慢了", dict(intent="troubleshoot", topics=["checkpoint_slow"])),
    (
        "QLoRA还是全参？33b",
        dict(params_b=33, intent="compare", compare={"kind": "method", "options": ["qlora", "full"]}),
    ),
    ("要不要全参，还是lora就够了，7b", dict(params_b=7, topics=["qlora_vs_full"])),
    # 还是 / 或者 opening a sentence asks another question, it does not set two options side by side
    (
        "8*A100 全量微调72B遇到OOM，需要怎样的配置才能全量微调72B？还是说72B只能lora方式微调？",
        dict(params_b=72, method="full", intent="plan", compare=None),
    ),
    ("34b 需要多少资源？单卡4090能跑吗？还是需要多卡？", dict(params_b=34, intent="plan", compare=None)),
    # "不管 A 还是 B 都..." is either of them, not a choice between them
    (
        "70B 做 sft 和 lora 要多少显存？13B 怎么跑都没事，一到 70B 不管 sft 还是 lora 都报显存不足",
        dict(params_b=70, compare=None),
    ),
    # "or" in a clause ending with a full stop states, it does not ask
    (
        "Llama3.1 70B full fine-tuning memory usage. The memory should be about eight times the model"
        " size, similar to the results observed with the 8B or 405B models.",
        dict(model="llama-3.1-70b", compare=None),
    ),
    ("A100 or H100, which is better for 70b?", dict(compare={"kind": "gpu", "options": ["a100-80gb", "h100-80gb"]})),
    ("how to deploy the deepseekV3 base on 16 H100", dict(model="deepseek-v3", gpus=16)),
    # servers written as a count, a GPU and its count per server
    ("Using 2 H100*8 machines to deploy deepseek-R1, can the context reach 128k?", dict(gpus=16, nodes=2)),
    ("2台A100*8的服务器 预训练 70b", dict(gpus=16, nodes=2, gpu="a100-80gb")),
    # a size in millions before a parameter word; an adapter's trainable count is not a size
    ("llama-2-7b-hf has 6738.415616 Million params, full finetune on A100", dict(model="llama-2-7b")),
    ("fine-tuning a 125M model with lora on a T4", dict(params_b=0.125, method="lora")),
    ("pretrain a 350m parameters model on 8 A100", dict(params_b=0.35, gpus=8)),
    ("lora with ~2M trainable parameters on a 7b", dict(params_b=7)),
    # memory a job uses is not a card
    ("dpo with Qwen2.5-0.5B at 1000 tokens cost 17GB GPU mem", dict(gpu=None, gpu_memory_gib=None)),
    ("lora 7b 占用了20G显存，正常吗", dict(gpu_memory_gib=None)),
    ("7b推理需要24G显存吗", dict(gpu_memory_gib=24)),
    # a negation reaches over a determiner and over methods joined to the negated one
    ("finetune llama-7b without any PEFT and Quantization, OOM on one A100", dict(method="full")),
    ("不使用lora，全参微调7b", dict(method="full")),
    ("how can full parameters be finetuned rather than lora? 33b on 8 A800", dict(method="full")),
    ("full parameter finetuning on A100 40G? 8 GPUs, max_words = 512, 7B", dict(seq_len=512, gpus=8)),
    # a strong method word inside a weak phrase ("run ... model") is that method
    ("two options: 8*24G 4090 or 8*48G A6000. I have LLM 11B, which option can run PPO model?", dict(method="ppo")),
    ("which option is faster for 70b lora: 8 A100 or 4 H100?", dict(intent="compare")),
    # "option" is no OPT model, "yield" no Yi
    ("two options for qwen 7b lora, which option is cheaper?", dict(not_notes=["unknown_model_name"])),
    # "my" right before a GPU name: the user's own, whatever else the clause says
    ("看别人视频2080ti 比我的3090 推理速度快好几倍 是什么原因 qwen1.5-7b", dict(gpu="rtx-3090-24gb")),
    # a setup the user had before loses to the one asked about
    ("以前都是单卡跑的glm6b，想用两张3090跑qwen72B-int4可行吗？", dict(gpu="rtx-3090-24gb", gpus=2)),
    ("原来用1张A100训练7b，现在想用8张A100训练70b全参", dict(gpus=8, params_b=70, method="full")),
    # 打算买 / 准备换成: what the user means to get is what they ask about
    ("我现在用的是3090，打算买一张4090，能跑qwen 14b的lora吗", dict(gpu="rtx-4090-24gb", gpus=1, method="lora")),
    ("现在有8张V100，准备换成4张A800，全参微调qwen 14b要多久", dict(gpu="a800-80gb", gpus=4, method="full")),
    ("实验室是两张2080ti，考虑入手一张A6000，微调7b的lora够不够", dict(gpu="rtx-a6000-48gb", gpus=1)),
    ("想用2张M40 24G微调7b可以吗", dict(gpu="m40-24gb", gpus=2, params_b=7)),
    ("4张 英伟达 H800 训练 13b", dict(gpu="h800-80gb", gpus=4)),
    ("有人试过72b需要多少张A100（80G）吗，32卡oom了", dict(gpus=32, gpu="a100-80gb")),
    ("请问该模型在千卡集群上训练了多久？7b 预训练", dict(gpus=1000, params_b=7)),
    ("两千张卡预训练 70b 要多久", dict(gpus=2000, method="pretrain")),
    ("三百张A100 预训练 7b", dict(gpus=300, gpu="a100-80gb")),
    ("用了8张A100还是OOM。70b 全参", dict(gpus=8, params_b=70, compare=None)),
    ("一千二百张H100 预训练 70b 要多久", dict(gpus=1200, gpu="h100-80gb")),
    ("1.2万张卡 预训练 405b", dict(gpus=12_000)),
    ("5千卡集群预训练70b", dict(gpus=5000)),
    ("万兆网络，两台8卡A100，全参 70b", dict(gpus=16, nodes=2, fabric="eth-10")),
    ("2张4090 48G 跑 70b", dict(gpu="rtx-4090-24gb", gpus=2, gpu_memory_gib=48)),
    ("70b 推理 4张A6000 tp=2 还是 tp=4", dict(tp=None, notes=["setting_choices"])),
    ("lora微调 72Bqwen 要多大内存？机器是A800服务器", dict(params_b=72, method="lora")),
    ("10B 说的是 token 数吗？假如要对 13B 的模型做增量预训练，要几张卡", dict(params_b=13, method="continue")),
    ("baichuan-7b 全参微调，现在用单张 A100 80G 跑会 OOM", dict(gpus=1, gpu="a100-80gb")),
    ("int4 下 8G显存够 lora 微调 6b 吗", dict(gpus=1, gpu_memory_gib=8, params_b=6)),
    ("实验室每张卡只有16GB显存，lora 微调 9b", dict(gpu_memory_gib=16, params_b=9)),
    (
        "4*v100 32G 上跑 13b 增量预训练爆显存，参数是\nper_device_train_batch_size 1\nblock_size 512",
        dict(seq_len=512, micro_batch=1, gpus=4),
    ),
    ("qwen72b 910b280T 需要多少节点才能微调", dict(model="qwen-72b", gpu=None, notes=["unsupported_hardware"])),
    ("用 RTX 2060 能微调 7b 吗", dict(gpu=None, notes=["unsupported_hardware"])),
    ("用3*4090微调7b依然out of memeory，什么原因", dict(gpus=3, topics=["oom_large_model"])),
    ("8张3090微调14b显示内存不够是正常的吗", dict(gpus=8, topics=["oom_large_model", "offload_host_ram"])),
    ("fine-tuning llama3-8b always raises out-of-memory errors on 4*A100", dict(topics=["oom_large_model"])),
    ("PPO on a 3B model: small tensor_parallel_size results in GPU under-utilization", dict(topics=["gpu_starved_io"])),
    ("GPU utilization fluctuates between 0% and 10% while fine-tuning 8b", dict(topics=["gpu_starved_io"])),
    ("the job exited with return code -9 during zero3 offload of 13b", dict(topics=["offload_host_ram"])),
    ("用deepspeed训练6b返回错误码-9 啥意思", dict(topics=["offload_host_ram"])),
    ("SGLang部署qwen3-32b，请求时显存缓慢上涨", dict(topics=["oom_large_model"])),
    ("vllm serving 7b: memory keeps growing with every request", dict(topics=["oom_large_model"])),
    ("7b模型预训练需要多少token", dict(params_b=7, method="pretrain", topics=["chinchilla_tokens"])),
    ("H100上用fp8训练70b值得吗", dict(gpu="h100-80gb", params_b=70, topics=["fp8_transformer_engine"])),
    ("通义千问72B推理部署", dict(model="qwen2.5-72b", method="infer")),
    ("部署 通义千问72B，面向东南亚用户", dict(model="qwen2.5-72b", method="infer", users="sea")),
    ("千问14b lora微调", dict(model="qwen2.5-14b", method="lora")),
    ("百川13b全参", dict(model="baichuan2-13b", method="full")),
    ("glm4 9b 指令微调", dict(model="glm-4-9b", method="full")),
    ("零一万物34b qlora", dict(model="yi-34b", method="qlora")),
    ("deepseek满血版部署要多少卡", dict(model="deepseek-v3", method="infer")),
    ("增量预训练 7b", dict(params_b=7, method="continue")),
    ("继续预训练qwen2.5-7b，100亿token", dict(model="qwen2.5-7b", method="continue", train_tokens=10 * B)),
    ("从零训练一个13b模型", dict(params_b=13, method="pretrain")),
    (
        "预训练13b，1.4万亿token，30天内，预算50万人民币",
        dict(
            params_b=13,
            method="pretrain",
            train_tokens=1.4 * T,
            deadline_days=30,
            budget_usd=500_000 / 7.2,
            notes=["currency_converted"],
        ),
    ),
    ("7b lora 预算5万美元", dict(params_b=7, method="lora", budget_usd=50_000)),
    ("70b全参，2周内完成", dict(params_b=70, deadline_days=14)),
    ("两周内训完13b", dict(params_b=13, deadline_days=14)),
    ("一个月内训完7b", dict(params_b=7, deadline_days=30)),
    # 用户手上有的时间是期限；已经花掉的时间、每天的时长、别的东西的时长不是
    ("我们有10天时间，预训练 3b，1T token", dict(params_b=3, deadline_days=10)),
    ("10天之内要训完，qwen 7b 全参微调", dict(deadline_days=10)),
    ("时间只有一周，70b lora 要几张卡", dict(deadline_days=7)),
    ("我们只有3天，7b 全参微调要几张卡", dict(deadline_days=3)),
    ("还剩10天，qwen 72b lora", dict(deadline_days=10)),
    ("8张A100训练qwen 7b 训练了3天，70b 要多久", dict(deadline_days=None)),
    ("8张A100训练qwen 7b 用了3天，70b 要多久", dict(deadline_days=None)),
    ("每天跑8小时，70b lora 要几天", dict(deadline_days=None)),
    ("有2个月的数据，7b lora", dict(deadline_days=None)),
    ("13b上下文8k lora", dict(params_b=13, seq_len=8192, method="lora")),
    ("序列长度4096，7b全参", dict(params_b=7, seq_len=4096, method="full")),
    ("7b 32k上下文 推理", dict(params_b=7, seq_len=32768, method="infer")),
    ("7b全参 批量8", dict(params_b=7, micro_batch=8)),
    ("全局批量1024 预训练7b", dict(params_b=7, global_batch=1024, method="pretrain")),
    ("5万条数据，训练3轮，7b lora", dict(params_b=7, samples=50_000, epochs=3, method="lora")),
    ("10万条样本微调13b", dict(params_b=13, samples=100_000)),
    ("语料500G，继续预训练7b", dict(params_b=7, dataset_gb=500, method="continue")),
    ("1TB语料预训练7b", dict(params_b=7, dataset_gb=1000, method="pretrain")),
    ("显存24G能跑7b推理吗", dict(params_b=7, method="infer", gpu_memory_gib=24)),
    ("4张24G的卡 13b lora", dict(params_b=13, method="lora", gpu_memory_gib=24, gpus=4)),
    ("4090能跑7b qlora吗", dict(params_b=7, method="qlora", gpu="rtx-4090-24gb")),
    ("英伟达H100 8卡 70b lora", dict(params_b=70, gpu="h100-80gb", gpus=8, method="lora")),
    ("8块A100 80G全参7b", dict(params_b=7, gpu="a100-80gb", gpus=8, method="full")),
    ("L40S四张跑13b lora", dict(params_b=13, gpu="l40s-48gb", method="lora")),
    ("H20部署70b", dict(params_b=70, gpu="h20-96gb", method="infer")),
    ("昇腾910B能训练70b吗", dict(params_b=70, notes=["unsupported_hardware"], unknown=["昇腾910b"])),
    ("70b全参 zero3 开梯度检查点", dict(params_b=70, zero=3, ckpt="full")),
    ("70b全参 不开重计算", dict(params_b=70, ckpt="none")),
    ("70b全参 deepspeed zero2 下放到cpu", dict(params_b=70, zero=2, offload="cpu", framework="deepspeed")),
    ("用torchtune全参微调llama 3.1 70b，8卡A100，开cpu offload", dict(model="llama-3.1-70b", framework="torchtune")),
    (
        "用LLaMA-Factory做qlora微调70b，两张4090",
        dict(params_b=70, method="qlora", framework="llama-factory", not_notes=["unknown_model_name"]),
    ),
    ("用魔搭swift做lora微调qwen2.5-7b", dict(model="qwen2.5-7b", method="lora", framework="ms-swift")),
    ("用unsloth微调qwen2.5 7b lora，一张4090", dict(model="qwen2.5-7b", framework="unsloth")),
    ("megatron预训练7b，1万亿token", dict(params_b=7, method="pretrain", framework="megatron")),
    ("answer.ai的fsdp_qlora 两张3090 qlora 70b", dict(params_b=70, framework="answerai-fsdp-qlora")),
    ("用LLaMA-Factory加deepspeed zero3做lora微调70b", dict(params_b=70, zero=3, framework="llama-factory")),
    ("用axolotl做qlora微调llama 3 8b", dict(model="llama-3-8b", method="qlora", framework="axolotl")),
    ("trl的SFTTrainer做lora微调llama 3 8b", dict(model="llama-3-8b", framework="hf-trainer")),
    ("vllm部署llama 70b", dict(method="infer", framework=None, notes=["framework_noted"])),
    ("70b全参 fsdp", dict(params_b=70, zero=3)),
    ("张量并行8 流水线并行4 预训练175b", dict(params_b=175, tp=8, pp=4, method="pretrain")),
    (
        "256张H100预训练qwen3-235b-a22b，tp=2 pp=8 ep=32 etp=1",
        dict(model="qwen3-235b-a22b", method="pretrain", gpus=256, tp=2, pp=8, ep=32, etp=1),
    ),
    ("7b全参 bf16", dict(params_b=7, precision="bf16-mixed")),
    ("70b 推理 int4量化", dict(params_b=70, method="infer", precision="int4")),
    ("70b 推理 fp8", dict(params_b=70, method="infer", precision="fp8")),
    ("最快训完13b", dict(params_b=13, objective="fastest")),
    ("最省钱的7b qlora方案", dict(params_b=7, method="qlora", objective="cheapest")),
    ("用卡最少跑70b lora", dict(params_b=70, method="lora", objective="fewest")),
    ("在香港部署7b", dict(params_b=7, method="infer", region="hk")),
    ("美国机房训练70b", dict(params_b=70, region="us")),
    ("面向日本用户部署qwen2.5-7b", dict(model="qwen2.5-7b", method="infer", users="jp")),
    ("图片数据，7b多模态全参微调", dict(params_b=7, data="image")),
    ("视频数据训练7b", dict(params_b=7, data="video")),
    ("已分词的数据预训练7b", dict(params_b=7, data="tokens", method="pretrain")),
    ("lora 秩64 llama3 8b", dict(model="llama-3-8b", lora_rank=64, method="lora")),
    ("DPO训练qwen2.5-7b", dict(model="qwen2.5-7b", method="dpo")),
    ("RLHF训练llama3 8b需要多少卡", dict(model="llama-3-8b", method="ppo")),
    ("7b还是13b，lora，4090", dict(intent="compare", compare={"kind": "model", "options": [7.0, 13.0]})),
    ("帮助", dict(intent="help")),
    ("怎么用", dict(intent="help")),
    ("gpus=4 nodes=2 8卡 70b", dict(params_b=70, gpus=4, nodes=2, notes=["text_overridden"])),
    ("QLoRA全参微调7b", dict(params_b=7, method="qlora", notes=["method_contradiction"])),
    ("7b 全参 lora", dict(params_b=7, method="full", notes=["method_contradiction"])),  # the first named
    ("8卡 16卡 70b", dict(gpus=8, params_b=70, notes=["set_aside"])),
    ("７０ｂ　全参", dict(params_b=70, method="full")),
    ("<@U0BOT> 700亿 全参微调", dict(params_b=70, method="full")),
    ("70b 全参 gpu=h100 lang=en", dict(params_b=70, gpu="h100-80gb")),
    ("有多少卡都喂不满，GPU利用率上不去，70b", dict(params_b=70, topics=["gpu_starved_io"])),
    ("显存48G的显卡来微调13B的模型", dict(params_b=13, gpu_memory_gib=48, gpus=1)),
    ("单机8卡微调qwen 7b", dict(model="qwen-7b", gpus=8, nodes=1)),
    ("glm2和glm3分别需要多大的显存才能微调", dict(model="chatglm2-6b")),
    ("Qwen2.5-7B-Instruct 需要多少显存", dict(model="qwen2.5-7b", method="infer")),
    ("用Qwen2.5-7B-Instruct训练自己的数据要多少显存", dict(model="qwen2.5-7b", method="full")),
    ("训练时运行在8张A100上，GPU利用率很低", dict(method="full", gpus=8)),  # 训练: a training, not serving
    ("gemma-2-27b-it 单卡能跑起来吗", dict(model="gemma-2-27b", method="infer", gpus=1)),
    (
        "我们公司有4台服务器，每台8张H800，想预训练一个30B的模型",
        dict(gpus=32, nodes=4, gpu="h800-80gb", method="pretrain"),
    ),
    ("两台机器，每台8张4090，微调 qwen2.5-7b", dict(gpus=16, nodes=2, gpu="rtx-4090-24gb")),
    ("2机16卡比单机8卡还慢，70b 全参", dict(gpus=16, nodes=2, notes=["baseline_count"])),
    ("8卡比单卡慢了，qwen 7b lora", dict(gpus=8)),
    ("两台机器，内网是千兆的，训练很慢", dict(fabric="eth-1", nodes=2)),
    ("万兆网卡 两台 4090 微调 7b", dict(fabric="eth-10")),
    ("25G网络，两台8卡A100，70b 全参", dict(fabric="eth-25", gpus=16)),
    ("IB 网络，两机16卡 H800", dict(fabric="ib-ndr400", gpus=16, nodes=2)),
    ("开了梯度检查点，7b 全参 显存占用多少", dict(params_b=7, not_topics=["checkpoint_slow"])),
    ("全参 DPO 训练 qwen2.5-7b 需要多少显存", dict(method="dpo")),
    ("想微调 32B 模型，之前用 8 张 L40 训练 32B 加载时中断了", dict(params_b=32, method="full")),
    ("训练一个7B模型需要多少卡", dict(params_b=7, method="pretrain")),
    ("72B 全量微调，4台 A800 机器，还是 OOM", dict(gpus=32, nodes=4, notes=["servers_of_usual_size"])),
    ("两台A100服务器，训练 70b lora", dict(gpus=16, nodes=2)),
    ("手头有6台PC，每台带一块RTX 3060，想分布式微调 7b", dict(gpus=6, nodes=6, gpu="rtx-3060-12gb")),
    ("每台16卡*32G显存，共 4机，70b sft", dict(gpus=64, nodes=4, gpu_memory_gib=32)),
    ("13B 的模型在三个8*V100 上训了多长时间？", dict(gpus=24, nodes=3)),
    ("14B 做全参数增量预训练，8张V100 跑得动吗？", dict(method="continue", gpus=8)),
    ("int4 下 8G显存够 lora 微调吗", dict(method="qlora", notes=["int4_lora_is_qlora"])),
    ("单张24gb4090 能训这个模型吗", dict(gpu="rtx-4090-24gb", gpus=1)),
    ("全参数微调要多少显存？想针对某个领域的知识做预训练，用全参数微调行不行？", dict(method="full")),
    ("llama13B + 中文lora 的 4-bit量化模型，能用 3090或4090 单卡在本地推理吗？", dict(method="infer")),
    ("lora 微调后的模型推理需要多少显存", dict(method="infer")),  # the fine-tuned model, served
    ("deepseek-r1-distill-qwen-32b 部署需要几张卡，并发100", dict(micro_batch=100, method="infer")),
    ("100个并发 qwen2.5-7b 推理", dict(micro_batch=100, method="infer")),
    ("L40S 和 A100 跑 70b 推理哪个快", dict(compare={"kind": "gpu", "options": ["l40s-48gb", "a100-80gb"]})),
    ("训练到一半 loss 变成 nan，fp16，7b 全参", dict(params_b=7, topics=["loss_instability"])),
    ("想自己搭个服务器跑deepseek r1 满血版，预算50万，怎么配", dict(budget_usd=500_000 / 7.2, method="infer")),
    ("预算5万美元，微调 70b", dict(budget_usd=50_000)),
    ("老板让我用两张4090跑个qwen2.5-32b，能行吗", dict(method="infer", gpus=2)),
    ("从A100换到H100值得吗，训练 70b", dict(compare={"kind": "gpu", "options": ["a100-80gb", "h100-80gb"]})),
    ("128k token上下文 qwen2.5-7b 推理", dict(seq_len=131072)),
    ("14B 全参数训练，得几张显卡？假定 A100=40G.", dict(gpu="a100-40gb", params_b=14)),
    ("开了梯度检查点，但保存检查点要30分钟，70b", dict(topics=["checkpoint_slow"])),
    ("200G RoCE 网络，4台8卡 H100 预训练 7b", dict(fabric="roce-200", gpus=32, nodes=4)),
    ("用万兆网还是 IB 网络？两台 A100", dict(fabric=None)),
    ("节点之间是 100G 以太网，训练 70b 很慢", dict(fabric="eth-100")),
    ("5万条数据，平均每条800个token，qwen 7b lora", dict(samples=50_000, sample_tokens=800)),
    ("glm-4-9b 微调 lora，数据 5000 条，每条大约 500 token", dict(samples=5000, sample_tokens=500, train_tokens=None)),
    # 有样本条数时，每条的 token 数是样本长度，不是总 token 数；写明"总共"或一条装不下的才是总数
    ("2万条样本，每条2k token，qwen 7b lora", dict(samples=20_000, sample_tokens=2048, train_tokens=None)),
    ("3万条对话，每条2k token 左右，qwen 7b lora", dict(samples=30_000, sample_tokens=2048, train_tokens=None)),
    ("5万条数据，每条约2048个token，qwen 7b 全参微调", dict(samples=50_000, sample_tokens=2048)),
    ("10万条 平均长度1500 token 的数据，qwen 7b lora", dict(samples=100_000, sample_tokens=1500)),
    ("5万条数据，总共8万token，7b lora", dict(samples=50_000, sample_tokens=None, train_tokens=80_000)),
    ("预训练 7b，1.4万亿token，共1亿条文档", dict(sample_tokens=None, train_tokens=1.4 * T)),
    ("2万条数据，2k上下文，qwen 7b lora", dict(samples=20_000, seq_len=2048, sample_tokens=None)),
    (
        "用 zero3 offload 在 8 张 3090 上全参微调 qwen2.5-14b，内存 256G 够吗",
        dict(host_ram_gib=256, gpu_memory_gib=None),
    ),
    ("4 * A100-SXM4-40GB、内存1T，全参微调 14b", dict(host_ram_gib=1024, gpu="a100-40gb", gpus=4)),
    ("80G显存 512G内存 跑 70b lora", dict(host_ram_gib=512, gpu_memory_gib=80)),
    ("预算5万块，想微调一个70B模型", dict(budget_usd=50_000 / 7.2, notes=["currency_converted"])),
    ("4台机器 每个节点8卡 a800 训练 13b", dict(gpus=32, nodes=4)),
    ("相比单卡，4卡训练 7b 没有提速", dict(gpus=4)),
    ("2台服务器，一共16张A100，全参微调 llama 70b", dict(gpus=16, nodes=2)),
    ("两台机器共16卡，lora 微调 70b", dict(gpus=16, nodes=2)),
    ("qwen2.5-7b 在4090上每秒多少 tokens/s", dict(model="qwen2.5-7b", method="infer")),
    ("训练 qwen2.5-7b 只有 2000 tokens/s，正常吗", dict(model="qwen2.5-7b", method="full")),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "23.65 GiB of which 1.2 GiB is free. qwen2.5-14b qlora",
        dict(model="qwen2.5-14b", method="qlora", gpu_memory_gib=23.65),
    ),
    ("[rank0]: RuntimeError: NCCL error: unhandled system error. 两机16卡训练 llama3 8b 报错", dict(gpus=16, nodes=2)),
    (
        "R1 的各个版本的显存占用情况有文档不？",
        dict(model="deepseek-r1", method="infer", notes=["no_training_word_serving"]),
    ),
    ("qwen2.5-7b 需要多少显存", dict(model="qwen2.5-7b", method="infer")),
    ("qwen2.5-7b 用 deepspeed 需要多少显存", dict(method=None)),
    ("qwen2.5-72b 8卡", dict(method=None, gpus=8)),
    ("我没有A100，只有4张3090，能微调qwen2.5-7b吗", dict(gpu="rtx-3090-24gb", gpus=4, compare=None)),
    ("官方说需要8张A100，我只有单张4090，能跑qwen2.5-14b推理吗", dict(gpu="rtx-4090-24gb", gpus=1, method="infer")),
    (
        "8张A100 还是 4张H100 训练 llama-3-8b 更快？",
        dict(
            intent="compare",
            compare={"kind": "gpu", "options": ["a100-80gb", "h100-80gb"], "counts": {"a100-80gb": 8, "h100-80gb": 4}},
        ),
    ),
    (
        "我有一台40G A100 服务器 和 一台 80G A800 服务器，能全参微调 qwen2.5-14b 么",
        dict(gpu="a100-40gb", gpus=16, nodes=2, notes=["mixed_gpus"]),
    ),
    ("我有2张3090和1张4090，能lora微调qwen2.5-14b吗", dict(gpu="rtx-3090-24gb", gpus=3, notes=["mixed_gpus"])),
    ("您好,目前的模型A10,24G显存可以支持预测功能吗?", dict(method="infer", gpu="a10-24gb")),
    ("全量数据用lora微调 qwen2.5-7b 要多久", dict(method="lora")),
    # 新加入目录的卡：工作站、GeForce、中国特供和笔记本的写法，互不遮蔽
    (
        "1张RTX5000ADA 32G能否运行qwen2.5-14b推理",
        dict(model="qwen2.5-14b", method="infer", gpu="rtx-5000-ada-32gb", gpus=1),
    ),
    ("3050Ti Laptop 4G VRAM能否运行qwen2.5-0.5b", dict(model="qwen2.5-0.5b", gpu="rtx-3050ti-laptop-4gb", gpus=1)),
    ("英伟达4060 能跑 qwen2.5-7b 推理吗", dict(model="qwen2.5-7b", method="infer", gpu="rtx-4060-8gb")),
    ("两张4060ti 16g 做 7b lora", dict(params_b=7, method="lora", gpu="rtx-4060ti-16gb", gpus=2)),
    ("4张5090D 微调 qwen2.5-32b lora", dict(model="qwen2.5-32b", method="lora", gpu="rtx-5090d-32gb", gpus=4)),
    ("rtx 4000 ada 跑 llama-3-8b 推理", dict(model="llama-3-8b", method="infer", gpu="rtx-4000-ada-20gb")),
    ("公司有台 RTX 4500 Ada 工作站，7b qlora 可以吗", dict(params_b=7, method="qlora", gpu="rtx-4500-ada-24gb")),
    ("a2000 12g 推理 qwen2.5-7b", dict(model="qwen2.5-7b", method="infer", gpu="rtx-a2000-12gb")),
    ("笔记本 4060 laptop 8G 跑 qwen2.5-7b 推理", dict(model="qwen2.5-7b", method="infer", gpu="rtx-4060-laptop-8gb")),
    ("两张3070 训练 1.5b 模型", dict(params_b=1.5, gpu="rtx-3070-8gb", gpus=2)),
    # a quantised checkpoint's name is its precision; 满血版 is served; a precision read for training is served
    (
        "vllm部署qwen2.5-72b-awq，2张4090，max-model-len 8192 能不能跑",
        dict(model="qwen2.5-72b", method="infer", precision="int4", gpus=2),
    ),
    ("DeepSeek-V3 671B 满血版需要多少张H20？fp8", dict(model="deepseek-v3", method="infer", precision="fp8")),
    ("节点之间需要什么样的网络？4台8卡H100预训练13b", dict(topics=["network_choice"], nodes=4)),
    ("qwen2.5-7b 在 H100 上每秒多少 token", dict(method="infer", not_topics=["chinchilla_tokens"])),
    ("我的 MacBook Pro M3 Max 能跑 qwen2.5-7b 吗", dict(unknown=["macbook pro m3 max"], gpu=None)),
    ("训练1B模型需要多大显存？2张24G训的动吗？", dict(gpus=2, gpu_memory_gib=24)),
    ("DeepSeek-R1-671B 在 12x8卡H20集群上 部署，分布式推理还是多实例？", dict(gpus=96, nodes=12, gpu="h20-96gb")),
    (
        "想部署一下glm4-9b-1m模型，请问需要多少显存才能跑支持max_model_len为1M的大模型？",
        dict(model="glm-4-9b-chat-1m", seq_len=1048576, method="infer"),
    ),
    ("训练时 GPU-Util 特别低，就 10%，CPU 却到了 480%", dict(topics=["gpu_starved_io"])),
    ("用多卡训练还没单卡快，qwen2.5-7b lora", dict(topics=["scaling_efficiency"])),
    ("qwen2.5-72b 部署，kv cache 量化为 int4，4张A100", dict(kv_cache="int4", gpus=4)),
    ("我使用T4卡进行模型部署，但是提示爆显存了，qwen2.5-7b 最小需要多大显存？", dict(gpu="t4-16gb", gpus=1)),
    # a model that shows the same thing too is a side mention, also in a question sentence
    (
        "我在sft阶段训练llama-7b版本时候发现多机不如单机。我使用gemma-2b也会出现同样的情况，您们之前有注意过么？",
        dict(model="llama-1-7b"),
    ),
    ("在pre-training的阶段，您大概用了多少个NVIDIA Tesla V100S GPUs，训练了多久？", dict(gpu="v100s-pcie-32gb")),
    # a pasted command's learning_rate is not a question about hyperparameters
    (
        "baichaun2 在 zero3 下 全参数微调和 lora 微调占用的显存一致\n\n    --stage sft \\\n"
        "    --finetuning_type lora \\\n    --learning_rate 2e-5 \\\n    --num_train_epochs 2.0",
        dict(not_intent="other"),
    ),
    ("量化后latency变慢了，rtx3090单卡，bs = 1", dict(method="infer", gpu="rtx-3090-24gb", gpus=1)),
    ("NCCL 网络延迟很高，多机训练 7b", dict(topics=["network_choice"], not_topics=["inference_deployment"])),
    # "2台 H100*8": two machines of eight; a form factor written after the count
    ("用 2台 H100*8 部署 deepseek-R1 671 B，context length 可以一直支持到 128k吗", dict(gpus=16, nodes=2)),
    ("A800单机8卡PCIE，怎么做Qwen72B的全量微调", dict(gpu="a800-pcie-80gb", gpus=8, nodes=1)),
    ("2张 RTX 2060 6g 推理 qwen 1.5b", dict(gpu=None, gpus=2, gpu_memory_gib=6, unknown=["rtx 2060"])),
    # fifth fresh batch
    ("看看这个配置跑ollama里面的deepseekv3快吗\n显卡：(NVIDIA) RTX4090 24Gx2张", dict(gpu="rtx-4090-24gb", gpus=2)),
    ("设备：8 * H20 (140GB)，SGLang 部署 GLM-4.5 并发性能较差", dict(gpu="h20-96gb", gpus=8, gpu_memory_gib=140)),
    ("问下跑qwen 72b的Reinforce++或者RLOO，大概需要多少资源", dict(method="ppo", model="qwen-72b")),
    ("full- parameters fine tune qwen2.5 7b 用4096的max_length显存大概要多少？", dict(seq_len=4096)),
    ("DPO训练的时候grad_norm出现nan值", dict(method="dpo", intent="troubleshoot", topics=["loss_instability"])),
    (
        "deepspeed 多卡训练，三个卡GPU利用率显示都是100%，但好像没有在训练，输出inputs后就没有动静了",
        dict(gpus=3, intent="troubleshoot", topics=["nccl_timeout"]),
    ),
    ("训练卡在第一个step，qwen 7b lora", dict(topics=["nccl_timeout"])),
    ("8卡在训练qwen 7b，需要多久", dict(gpus=8, not_topics=["nccl_timeout"])),
    (
        "[BUG] Qwen-14B-Chat-Int4 使用 vLLM 并没有加速？\n测试对比，和不使用vLLM 速度一样，使用vLLM并没有带来加速。",
        dict(intent="troubleshoot", topics=["inference_deployment"]),
    ),
    ("购买高性能主机，和购买云计算服务相比，有哪些优势和劣势？", dict(topics=["gpu_choice_a100_h100"])),
    ("SFT全参数微调qwen3-vl-4b-instruct，需要多少显存", dict(model="qwen3-vl-4b", method="full")),
    ("internvl 1.5 26b 微调需要几张卡", dict(model="internvl-chat-v1-5")),
    ("glm-4v 8卡，每张卡40G能训起来么？", dict(model="glm-4v-9b", gpus=8, gpu_memory_gib=40)),
    ("为什么13B的效果还不如7B的，用text-generation-webui部署，效果相差很大", dict(intent="other")),
    ("全参 qwen 7b，8卡*32G 够吗", dict(gpus=8, gpu_memory_gib=32)),
    ("16G显存的5060ti能lora qwen 7b吗", dict(gpu="rtx-5060ti-16gb")),
    ("请问最新的200K模型要是接受200k输入显存需要多少？", dict(seq_len=204800)),
    ("8卡比单卡慢了，qwen 7b lora", dict(intent="troubleshoot", topics=["scaling_efficiency"])),
    ("lmdeploy 部署internvl-38这种，张量并行使用3或者6这种，是否建议", dict(model="internvl3-38b")),
    ("一个语言模型8块4090 24 GB 训练46小时,请推测一下用3张A800 80 GB需要训练多久", dict(gpu="a800-80gb", gpus=3)),
    ("两台8卡A100服务器训练反而没有一台快，mixtral lora", dict(gpus=16, nodes=2, topics=["scaling_efficiency"])),
    ("actor用8张A100，critic用8张卡，vllm用16张卡，总共需要32张卡吗", dict(gpus=32, method="ppo")),
    ("训练reward model需要几张卡，qwen 7b", dict(method="ppo")),
    ("7B模型RL训练需要多少显存", dict(method="ppo")),
    ("请问1B 训练这个FineWeb，1个epoch 大概要多少显卡 跑多久呀", dict(method="pretrain")),
    (
        "我用2台4卡A100训练1个epoch时间在10h，单机4卡一个epoch 30min。请问哪些地方导致多机多卡训练效率降低的？",
        dict(gpus=8, nodes=2, topics=["scaling_efficiency"]),
    ),
    ("在两张24G的3090上全量微调，MODEL_MAX_Length设置为1024，batch_size都为1", dict(seq_len=1024)),
    ("14B 做全参数增量预训练，8台V100 * 32G 跑得动吗？", dict(gpu="v100-32gb", gpus=8)),
    ("24G显存能lora qwen 7b吗", dict(gpus=1, gpu_memory_gib=24)),
    ("每张卡只有16GB显存，lora微调chatglm 6b能不能用多张卡一起跑", dict(gpus=None)),
    ("lora微调qwen 7b，训练几步之后loss出现nan", dict(topics=["loss_instability"])),
    ("lora微调后模型输出停不下来，qwen3 4b", dict(intent="other")),
    ("之前我在8卡3090上训，速度是正常的；可换到8块a800上就特别慢", dict(gpu="a800-80gb", gpus=8)),
    ("测试机器：8xA100x80GB，vllm 部署 qwen2.5 72b 吞吐很低", dict(gpu="a100-80gb", gpus=8)),
    # "2机16卡" is sixteen over two machines; four cards cannot split over three: "3机4卡" is four per machine
    ("我只有3机4卡的80G显存设备去微调Qwen3-235B", dict(gpus=12, nodes=3)),
    ("单张 6000 pro 能全参微调 qwen 7b 吗", dict(gpu="rtx-pro-6000-96gb", gpus=1)),
    ("全参数微调需要42G左右显存，如果使用两个24G显卡可以吗？qwen 7b", dict(gpus=2, gpu_memory_gib=24)),
    ("0台8卡 lora llama 7b", dict(gpus=8)),  # no machines: no crash, the cards still counted
    ("我把MODEL_MAX_Length设置为1024, 7b lora on 4090", dict(seq_len=1024)),
    ("1.5B的模型用LoRA微调\n2.需要多少显存", dict(params_b=1.5)),
    ("qwen 7b 训练需要几张a100", dict(method="full")),
    ("24G显存，每个样本长度2048，能lora qwen 7b吗", dict(gpus=1)),
    ("24G显存总共能lora多大的模型", dict(gpu_memory_gib=24)),
    # OpenRLHF's name holds "rlhf" but the framework also runs SFT and DPO: the method word written wins
    ("openrlhf 和 llamafactory 比谁更快？就 sft，dpo 这些", dict(method="dpo")),
    ("用中文的llama2-13B做进一步预训练需要多少卡", dict(method="continue")),
    # a numbered list's numbers are no part of a size ("2.70B" is item 2, 70B); a list of sizes stays
    (
        "想请教几个问题：\n1.开源的代码能做多机多卡增量预训练吗？\n2.70B的模型要持续做增量预训练，最少得几台机器？",
        dict(params_b=70),
    ),
    ("sizes:\n1.5B: 8 GPUs\n2.7B: 16 GPUs, full fine-tune", dict(params_b=1.5)),
    # a bare number between a count and the card is its memory when the card comes with it
    (
        "大佬 7b bloom 大约需要多大的内存在非lora 的情况下，单机三张24 3090可以吗？",
        dict(gpus=3, gpu="rtx-3090-24gb", method="full"),
    ),
    ("两块40 a100 lora 13b", dict(gpus=2, gpu="a100-40gb")),
    ("每1k上下文要多少显存？34b 模型 16k上下文", dict(seq_len=16384)),
    # 非 before a method negates it ("在非lora的情况下"); 非常 and 除非 do not
    ("非常想用lora微调7b", dict(method="lora")),
    ("除非用lora，否则7b要几张卡", dict(method="lora")),
    # the fourteenth batch's English reading in Chinese: a pretrained model's weights are no pretraining
    ("用预训练好的7B模型做微调，2张A100", dict(method="full", gpus=2)),
    ("在预训练模型的基础上微调qwen 7b", dict(model="qwen-7b", method="full")),
    ("加载预训练权重后用lora微调llama 7b", dict(method="lora")),
    ("预训练一个7B模型需要多少卡", dict(params_b=7, method="pretrain")),
    # a count whose cards a 的-phrase describes; nodes and months are not cards
    ("如果是4个没有NVLink的V100（32G显存），只能当成4倍速的32G显存来微调吗", dict(gpus=4, gpu="v100-32gb")),
    ("两张二手的3090能微调7b吗", dict(gpus=2, gpu="rtx-3090-24gb")),
    ("2个节点上的A100训练很慢", dict(gpus=None)),
    ("租了3个月的A100跑训练", dict(gpus=None)),
    ("企业知识库，200人使用，int4，需要什么服务器", dict(micro_batch=200, notes=["users_as_concurrency"])),
    ("部署qwen 14b，支持50个用户", dict(micro_batch=50, notes=["users_as_concurrency"])),
    ("部署qwen 72b，支持200个用户同时使用", dict(micro_batch=200, not_notes=["users_as_concurrency"])),
    ("序列长度大于4096时显存不够，qwen 7b lora", dict(seq_len=4096)),
    ("上下文长度不超过32k，qwen 7b lora", dict(seq_len=32768)),
    ("最大长度约8192，llama 13b全参", dict(seq_len=8192)),
    ("序列长度在64卡上，llama 13b全参", dict(seq_len=None, gpus=64)),
    ("过滤掉序列长度小于128的样本，llama 13b全参", dict(seq_len=None)),
    ("200人规模的团队预训练一个7b模型", dict(method="pretrain", not_notes=["users_as_concurrency"])),
    ("服务200个用户，其中同时在线50人，部署qwen 7b", dict(micro_batch=50, not_notes=["users_as_concurrency"])),
    ("每天200人使用，部署qwen 14b", dict(not_notes=["users_as_concurrency"])),
    ("2个版本的A100", dict(gpus=None)),
    ("租了2个星期的A100", dict(gpus=None)),
    ("8块钱的A100一小时", dict(gpus=None)),
    ("预训练参数怎么设置，7b模型64张H100", dict(method="pretrain", gpus=64)),
    ("预训练checkpoint多大", dict(method="pretrain")),
    # the sixteenth batch
    ("1650显卡 40G内存可以跑起来Baichuan-13B-chat吗？", dict(gpu="gtx-1650-4gb", gpus=1, host_ram_gib=40)),
    ("Qwen3.5-35B-A3B GRPO zero3 2台H100 8-9分钟一步 慢的出奇", dict(gpus=16, nodes=2, topics=["scaling_efficiency"])),
    ("两台4090微调7b", dict(gpus=2, nodes=None)),
    ("chatglm ptuning微调，全程一张3080ti 12G显存", dict(model="chatglm-6b", gpus=1)),
    ("显卡：2*4090\n内存：128G\n微调qwen 7b", dict(gpus=2, gpu="rtx-4090-24gb")),
    ("多机训练 保存checkpoint要40分钟 70b zero3", dict(topics=["checkpoint_slow"])),
    ("存ckpt需要两个多小时", dict(topics=["checkpoint_slow"])),
    ("训练后模型一直重复输出同一句话", dict(intent="other")),
    ("1650条样本 lora 7b 8张a100", dict(gpu="a100-80gb", gpus=8)),
    ("每30分钟保存一次checkpoint，qwen 7b全参", dict(not_topics=["checkpoint_slow"])),
    ("16台H100卡，训练llama 3 70b", dict(gpus=16)),
    ("在4090条件下能lora微调qwen2 7b吗", dict(gpu="rtx-4090-24gb")),
    ("两张4090轮流跑qwen2 7b推理", dict(gpu="rtx-4090-24gb", gpus=2)),
    ("4台机器训练llama 3 8b，loss下降很正常，想估算下时间", dict(not_topics=["scaling_efficiency"])),
    ("预算1650元每月，部署qwen2 7b用什么卡", dict(gpu=None)),
    # 卡名和显存之间的规格（SXM4）；与卡分开写、这张卡也没有的显存不是它的（模型所需、别的配置）
    ("8张A800-SXM4-40GB 全参微调 qwen2-72b", dict(gpu="a800-40gb", gpus=8, gpu_memory_gib=None)),
    (
        "ChatGLM2-6B 以 FP16 精度加载，需要大概 13GB 显存，显卡可以使用 英伟达（NVIDIA） Tesla P40 吗",
        dict(gpu="p40-24gb", gpu_memory_gib=None, notes=["memory_apart_from_card"]),
    ),
    (
        "qwen3-235B-moe在4台H100（80GB）上能否训练成功，因为我看官方给的样例是在96GB的卡上训练的",
        dict(gpu="h100-80gb", gpus=32, nodes=4, gpu_memory_gib=None, notes=["memory_apart_from_stated"]),
    ),
    ("我的4090显存是48G，能lora 14b吗", dict(gpu="rtx-4090-24gb", gpu_memory_gib=48)),
    ("单卡A100，显存40G，微调7b", dict(gpu="a100-80gb", gpu_memory_gib=40)),
    ("8卡 V100 服务器，显存 16G，训练 7B", dict(gpu="v100-32gb", gpu_memory_gib=16)),
    ("H100 服务器 8卡，显存 94G，推理 70B", dict(gpu="h100-80gb", gpu_memory_gib=94)),
    ("4090，显存48G，能微调 32B 吗", dict(gpu="rtx-4090-24gb", gpu_memory_gib=48)),
    (
        "官方说需要显存为 60G，我有 4090，能跑吗",
        dict(gpu="rtx-4090-24gb", gpu_memory_gib=None, notes=["memory_apart_from_card"]),
    ),
    ("我想用lora训练一个效果更好的模型，然后部署推理", dict(method="lora")),
    ("用 qlora 微调完模型后部署推理需要什么配置", dict(method="qlora")),
    # 训练出来的东西（lora模型、微调后的模型）在推理里是被部署的；环境清单里的 "DeepSpeed version" 不是训练
    ("原始模型和lora模型批量推理速度差异，A100 40G", dict(method="infer", gpu="a100-40gb")),
    ("LoRA微调后的模型推理很慢，qwen 7b，一张4090", dict(method="infer", model="qwen-7b", gpus=1)),
    (
        "- DeepSpeed version: 0.15.1\n- GPU type: NVIDIA A100-SXM4-40GB\nlora模型批量推理速度慢",
        dict(method="infer", gpu="a100-40gb"),
    ),
    ("用lora微调qwen 7b，然后部署推理需要什么卡", dict(method="lora", model="qwen-7b")),
    ("用你们训练好的模型运行在云服务器上，服务器的最低配置要求是什么样的？", dict(method="infer")),
    ("训练一个7b模型，用的是 examples/train_lora/llama3_lora_sft.yaml，两张4090", dict(method="lora", gpus=2)),
    (
        "用一张L40训练，数据80亿token，跑100步要37.8秒，8小时够吗",
        dict(method="pretrain", notes=["tokens_read_as_pretraining"]),
    ),
    ("微调qwen 7b，数据20亿token，要多久", dict(method="full", not_notes=["tokens_read_as_pretraining"])),
    ("用 `xverse/XVERSE-65B` 做 lora 微调，需要几张A100", dict(params_b=65, method="lora", gpu="a100-80gb")),
    ("用starcoder2 7b做lora微调，一张4090够吗", dict(model="starcoder2-7b", method="lora", gpus=1)),
    ("run_finetune.sh 微调训练 需要多少张卡，用了4090 24G 4张 都报不足", dict(gpu="rtx-4090-24gb", gpus=4)),
    ("A100 80G 8张，全参微调 qwen 14b", dict(gpus=8)),
    ("租的A100 80G 8块钱一小时，跑qwen2-72b推理要几张？", dict(gpus=None)),
    ("qwen-vl 推理，A100 80G 1000张/秒 能做到吗", dict(gpus=None)),
    (
        "单卡部署多个lora，速度很慢\n```\npython -m vllm.entrypoints.openai.api_server --model /m/qwen3-0.6B "
        "--enable-lora --max-loras 3 --tensor-parallel-size 1\n```",
        dict(method="infer", model="qwen3-0.6b"),
    ),
    ("在A100上跑了3张图就OOM，qwen-vl 推理", dict(gpus=None)),
    # 卡名后括号里的显存就是这张卡的（A100(40G) 是 40GB 的 A100），之后别处写的显存不是它的
    (
        "我用的是4张A100(40G)，全参微调13b还是OOM，是不是需要80G的卡？",
        dict(gpu="a100-40gb", gpus=4, gpu_memory_gib=None, notes=["memory_apart_from_stated"]),
    ),
    ("论文说在A100上提速1.45倍，我测下来没有。测试环境：GPU: A100 40GB，llama-7b awq推理", dict(gpu="a100-40gb")),
]

CASES = [pytest.param(q, e, id=f"en-{i}") for i, (q, e) in enumerate(EN)] + [
    pytest.param(q, e, id=f"zh-{i}") for i, (q, e) in enumerate(ZH)
]
META = {"intent", "not_intent", "topics", "not_topics", "compare", "errors", "notes", "not_notes", "unknown"}


def test_table_size_and_languages():
    assert len(CASES) >= 120
    assert len(ZH) * 2 >= len(CASES)


@pytest.mark.parametrize("question, expect", CASES)
def test_parser_table(question, expect):
    parsed = parse(question)
    codes = [e.code for e in parsed.errors]
    if "errors" in expect:
        assert set(expect["errors"]) <= set(codes), codes
        return
    assert not codes, parsed.errors
    got = parsed.request.model_dump()
    for key, value in expect.items():
        if key in META:
            continue
        expected = pytest.approx(value) if isinstance(value, int | float) else value
        assert got[key] == expected, f"{key}: {got[key]!r} != {value!r}"
    if "intent" in expect:
        assert parsed.intent == expect["intent"]
    if "not_intent" in expect:
        assert parsed.intent != expect["not_intent"]
    if "topics" in expect:
        assert set(expect["topics"]) <= set(parsed.topics), parsed.topics
    if "not_topics" in expect:
        assert not set(expect["not_topics"]) & set(parsed.topics), parsed.topics
    if "compare" in expect:
        assert parsed.compare == expect["compare"]
    if "notes" in expect:
        assert set(expect["notes"]) <= {n.code for n in parsed.notes}, [n.code for n in parsed.notes]
    if "not_notes" in expect:
        assert not set(expect["not_notes"]) & {n.code for n in parsed.notes}, [n.code for n in parsed.notes]
    if "unknown" in expect:
        assert set(expect["unknown"]) <= set(parsed.unknown), parsed.unknown
