"""Simplified Chinese for the report's fixed strings: the fallback used when Qt's
translator has no entry for a string (no compiled ``.qm``). Keys are the English source
strings exactly as the report passes them to ``tr("Report", ...)``; ``{name}`` fields are
kept as they are."""

STRINGS = {
    # title block
    "GPU sizing report": "GPU 容量规划报告",
    "Project": "项目",
    "Author": "作者",
    "Date": "日期",
    "App version": "软件版本",
    "engine": "计算引擎",
    "Spec data": "规格数据",
    "retrieved {first} to {last}; {rows}": "采集于 {first} 至 {last}；{rows}",
    "{n} rows from your own database": "{n} 行来自您自己的数据库",
    "GPUs": "GPU 数",
    "instances": "云实例",
    "fabrics": "互连网络",
    "model presets": "模型预设",
    # sections
    "Recommendation": "推荐方案",
    "Inputs": "输入",
    "Compared plans": "对比方案",
    "Memory per GPU": "每 GPU 显存",
    "Time to train": "训练时间",
    # the host side (issue 19)
    "Host side": "主机侧",
    "Checkpoint": "检查点",
    "Write": "写入",
    "Overhead": "开销",
    "Disk (kept)": "磁盘（保留）",
    "Host RAM per node": "每节点主机内存",
    "Input pipeline": "输入管线",
    "fed": "供给充足",
    "CPU-bound": "受 CPU 限制",
    "storage-bound": "受存储限制",
    "unknown (no instance)": "未知（无实例）",
    "Checkpoint: resumable (weights, optimizer states, RNG) as torch.save writes it, or torch.distributed.checkpoint "
    "with one file per rank; write time at the node's storage bandwidth; overhead = write time over the save "
    "interval.": "检查点：可恢复训练的检查点（权重、优化器状态、随机数状态），按 torch.save 写出，或按 "
                 "torch.distributed.checkpoint 每个 rank 一个文件；写入时间按节点存储带宽计算；开销 = 写入时间 / 保存间隔。",
    "Cost of the training run (USD)": "训练总成本（美元）",
    "Serving performance": "推理服务性能",
    "Cost per million generated tokens (USD)": "每百万生成 token 成本（美元）",
    "Scaling of the recommended plan": "推荐方案的扩展性",
    "Calibration": "校准",
    "Assumptions": "假设",
    "Data sources": "数据来源",
    "Notes": "备注",
    # recommendation
    "{plan}: {hw} on {nodes} node(s).": "{plan}：{hw}，共 {nodes} 个节点。",
    "It trains {model} ({params} parameters) on {tokens} tokens in {time} at {tps} tokens/s (MFU {mfu}), "
    "{gpuh} GPU-hours.": "在 {tokens} 个 token 上训练 {model}（{params} 参数）需要 {time}，吞吐 {tps} token/秒"
                         "（MFU {mfu}），共 {gpuh} GPU 小时。",
    # durations (report/text.duration: units.fmt_seconds with these words)
    "min": "分钟",
    "h": "小时",
    "days": "天",
    "One step takes {step} at {tps} tokens/s (MFU {mfu}).": "每步耗时 {step}，吞吐 {tps} token/秒（MFU {mfu}）。",
    "Cost:": "成本：",
    "At the blended price ({mix}): {usd}.": "按混合价格（{mix}）：{usd}。",
    "No price is known for a bare GPU; choose a cloud instance to see costs.":
        "单独的 GPU 没有已知价格；请选择云实例以查看成本。",
    "{plan}: {hw} serves {model} at {tps} generated tokens/s for {batch} concurrent sequences ({per_user} tokens/s "
    "per user); prefill of a {prompt}-token prompt takes {prefill}.":
        "{plan}：{hw} 运行 {model}，{batch} 路并发时生成 {tps} token/秒（每用户 {per_user} token/秒）；"
        "{prompt} token 提示词的预填充耗时 {prefill}。",
    "This meets the target of {target} tokens/s.": "达到 {target} token/秒 的目标。",
    "This falls short of the target of {target} tokens/s.": "未达到 {target} token/秒 的目标。",
    "Cost: {usd} per million generated tokens at the {basis} price ({hour} per hour).":
        "成本：{basis}价格下每百万生成 token {usd}（每小时 {hour}）。",
    "Memory per GPU: {need} of {cap} ({verdict}).": "每 GPU 显存：{need} / {cap}（{verdict}）。",
    "fits": "可容纳",
    "does not fit": "放不下",
    "The chosen plan, {plan}, could not be estimated:": "所选方案 {plan} 无法估算：",
    "Across the {n} compared plans": "在 {n} 个对比方案中",
    "fastest: {plan} ({time})": "最快：{plan}（{time}）",
    "fastest: {plan} ({tps} tokens/s)": "最快：{plan}（{tps} token/秒）",
    "cheapest on demand: {plan} ({usd})": "按需价格最便宜：{plan}（{usd}）",
    "cheapest per million tokens: {plan} ({usd})": "每百万 token 最便宜：{plan}（{usd}）",
    "{n} plan(s) could not be estimated.": "{n} 个方案无法估算。",
    "Engine advice:": "引擎建议：",
    # the recommendation rule (report/model.recommend, html.RULE_TEXT)
    "Recommendation rule: of the plans that fit in GPU memory, the cheapest at the on-demand price; when none of "
    "them has an on-demand price, the fastest.":
        "推荐规则：在能装入 GPU 显存的方案中，选按需价格最低者；若这些方案都没有按需价格，则选最快者。",
    "Recommendation rule: of the plans that fit in GPU memory, the cheapest per million tokens at the on-demand "
    "price; when none of them has an on-demand price, the fastest.":
        "推荐规则：在能装入 GPU 显存的方案中，选按需价格下每百万 token 成本最低者；若这些方案都没有按需价格，则选最快者。",
    "Recommendation rule: of the plans that fit in GPU memory and reach the target tokens/s (all that fit when "
    "none reaches it), the cheapest per million tokens at the on-demand price; when none of them has an "
    "on-demand price, the fastest.":
        "推荐规则：在能装入 GPU 显存且达到目标 token/秒 的方案中（没有方案达到目标时，在所有能装入的方案中），"
        "选按需价格下每百万 token 成本最低者；若这些方案都没有按需价格，则选最快者。",
    "No plan that fits reaches the target of {target} tokens/s.": "能装入显存的方案都未达到 {target} token/秒 的目标。",
    "{plan} is the cheapest of the {n} of {total} plans that qualify.":
        "{plan} 是 {total} 个方案中 {n} 个符合条件者里最便宜的。",
    "{plan} is the fastest of the {n} of {total} plans that qualify; none of them has an on-demand price.":
        "{plan} 是 {total} 个方案中 {n} 个符合条件者里最快的；它们都没有按需价格。",
    "None of the {total} plans fits in GPU memory, so none is recommended; shown: {plan}, the plan open in the "
    "planner.": "{total} 个方案都无法装入 GPU 显存，因此不作推荐；此处展示规划器中打开的方案 {plan}。",
    "Estimate failed:": "估算失败：",
    "estimate failed": "估算失败",
    # inputs
    "Setting": "设置",
    "Value": "值",
    "Model": "模型",
    "Mode": "模式",
    "Training tokens": "训练 token 数",
    "Sequence length": "序列长度",
    "Micro-batch": "微批大小",
    "Global batch (sequences)": "全局批大小（序列）",
    "Precision recipe": "精度方案",
    "Optimizer": "优化器",
    "Attention": "注意力实现",
    "Activation recomputation": "激活重计算",
    "Offload": "卸载",
    "Framework": "框架",
    "Optimizer implementation": "优化器实现",
    "Fine-tuning": "微调方式",
    "LoRA rank": "LoRA 秩",
    "LoRA target modules": "LoRA 目标模块",
    "LoRA adapter dtype": "LoRA 适配器数据类型",
    "LoRA dropout": "LoRA dropout",
    "prepare_model_for_kbit_training": "prepare_model_for_kbit_training",
    "Inference API": "推理接口",
    "Concurrent sequences": "并发序列数",
    "Prompt length (tokens)": "提示词长度（token）",
    "New tokens per request": "每请求生成 token 数",
    "Weights": "权重精度",
    "KV cache": "KV 缓存",
    "Target generated tokens/s": "目标生成速度（token/秒）",
    "Plan": "方案",
    "Plan options": "方案选项",
    "Hardware": "硬件",
    "Layout": "并行布局",
    "Network": "网络",
    "recommended": "推荐",
    "instance network": "实例自带网络",
    "default": "默认",
    # memory
    "Parameters": "参数",
    "Gradients": "梯度",
    "Optimizer states": "优化器状态",
    "Activations": "激活",
    "Other": "其他",
    "CUDA context, NCCL, allocator": "CUDA 上下文、NCCL、分配器",
    "GPU capacity": "GPU 显存容量",
    "GB per GPU (10^9 bytes)": "每 GPU GB（10^9 字节）",
    "Peak allocated": "峰值分配",
    "With runtime overhead": "含运行时开销",
    "Capacity": "容量",
    "Fits": "可容纳",
    "yes": "是",
    "no": "否",
    "Largest micro-batch": "最大微批",
    "Largest batch": "最大批",
    # time and cost
    "GPU": "GPU",
    "Step": "单步时间",
    "Tokens/s": "token/秒",
    "MFU": "MFU",
    "GPU-hours": "GPU 小时",
    "On-demand": "按需",
    "1-yr reserved": "1 年预留",
    "3-yr reserved": "3 年预留",
    "Spot": "竞价",
    "Prices dated": "价格日期",
    "no price (bare GPU)": "无价格（单独 GPU）",
    "the provider publishes no price": "云厂商未公布价格",
    "set in the scenario": "在场景中设定",
    "the built-in default, not a dated market rate": "内置默认值，并非某一日期的市场汇率",
    "¥→$: the provider quotes this price in CNY; converted to USD at {rate} CNY per USD ({how}).":
        "¥→$：该云厂商以人民币报价；按 {rate} 人民币/美元换算为美元（{how}）。",
    "Prices more than {days} days old may be stale: {plans}.": "以下方案的价格已超过 {days} 天，可能已过时：{plans}。",
    "Whole run at each price of the instance; '-' where the provider publishes no such price.":
        "按实例各类价格计算的整个训练任务成本；“-”表示云厂商未公布该价格。",
    "At full batch, from the instance's hourly price; '-' where the provider publishes no such price.":
        "按满批次和实例小时价格计算；“-”表示云厂商未公布该价格。",
    "Prefill": "预填充",
    "Decode tokens/s": "解码 token/秒",
    "vs target": "相对目标",
    "vs target {t}": "相对目标 {t}",
    "meets": "达标",
    "short": "不足",
    "Per user": "每用户",
    "Request latency": "请求延迟",
    "vLLM per token": "vLLM 每 token",
    # scaling
    "The scaling curve could not be computed:": "无法计算扩展曲线：",
    "Strong scaling: the layout of {plan} with the data-parallel degree grown over nodes of {n} GPUs, global batch "
    "fixed; network {fabric}. Efficiency = throughput(n) / (n × throughput of the smallest count).":
        "强扩展：保持 {plan} 的并行布局，按每节点 {n} 个 GPU 增加数据并行度，全局批大小不变；网络 {fabric}。"
        "效率 = 吞吐(n) / (n × 最小节点数时的吞吐)。",
    "Throughput (tokens/s)": "吞吐（token/秒）",
    "Efficiency": "效率",
    "ideal (linear)": "理想（线性）",
    "no-overlap reference": "无重叠参考",
    "engine model": "引擎模型",
    "reference: ideal linear (left), nothing overlapped (right)": "参考：理想线性（左），完全无重叠（右）",
    "this plan": "本方案",
    "nodes ({n} GPUs each, log scale)": "节点数（每节点 {n} 个 GPU，对数坐标）",
    "Nodes": "节点数",
    "No-overlap": "无重叠",
    "Step change at +{us} µs per hop": "每跳延迟 +{us} 微秒时的单步变化",
    "Last column, latency sensitivity: how much longer a step takes when every step of every inter-node collective "
    "waits {us} µs more (a slower switch, or TCP in place of RDMA); a few percent or less: the plan is bound by "
    "bandwidth and compute, not by network latency.":
        "最后一列为延迟敏感度：每个节点间集合通信的每一步多等待 {us} 微秒（交换机更慢，或用 TCP 代替 RDMA）时，单步时间"
        "增加多少；只有几个百分点或更少，说明该方案受带宽和计算限制，而不受网络延迟限制。",
    # calibration
    "The scenario names calibration profile {name!r}, which could not be used:": "场景指定的校准配置 {name!r} 无法使用：",
    "Profile": "配置",
    "Measured on": "测量设备",
    "GEMM efficiency (of datasheet peak)": "GEMM 效率（占规格峰值）",
    "Overhead per GEMM": "每次 GEMM 开销",
    "Memory-bound kernels (of HBM bandwidth)": "访存受限内核（占 HBM 带宽）",
    "Intra-node bus bandwidth": "节点内总线带宽",
    "Inter-node bus bandwidth": "节点间总线带宽",
    "Probe measurements replace the engine's default efficiencies in every plan of this report.":
        "本报告所有方案均以探测实测值替代引擎的默认效率。",
    "Item": "项目",
    # assumptions, sources, notes
    "Costs: GPU-hours of the whole run at each hourly price of the instance (all GPUs of every node billed); no "
    "storage, egress or idle time.": "成本：整个训练任务的 GPU 小时乘以实例各类小时价格（按每个节点的全部 GPU 计费）；"
                                     "不含存储、出网流量和空闲时间。",
    "Cost per million tokens: the instance's hourly price divided by the decode throughput at the given batch, "
    "running all the time.": "每百万 token 成本：实例小时价格除以给定批大小下的解码吞吐，按持续满载运行计算。",
    "the peak allocated memory": "峰值分配显存",
    "Kind": "类别",
    "Row": "条目",
    "Source": "来源",
    "Retrieved": "采集日期",
    "Instance": "实例",
    "No notes.": "无备注。",
    # the serving section (issue 15): the scenario's serve section on each plan's machine
    "Serving": "推理服务部署",
    "Serve page deployment": "推理服务页的部署",
    "Deployment": "部署",
    "{n} concurrent requests": "{n} 个并发请求",
    "{r} requests/s arriving": "每秒到达 {r} 个请求",
    "{model} served by {engine} at steady state: {load}, {isl} input and {osl} output tokens per request; tp {tp} × "
    "pp {pp}, {replicas} replica(s), {wd} weights, {kd} KV cache.":
        "{model} 由 {engine} 以稳态提供推理服务：{load}，每个请求输入 {isl} 个、输出 {osl} 个 token；"
        "tp {tp} × pp {pp}，{replicas} 个副本，{wd} 权重，{kd} KV 缓存。",
    "Targets: {goals}.": "目标：{goals}。",
    "No latency targets set.": "未设定时延目标。",
    "TTFT": "首 token 时延 (TTFT)",
    "TPOT": "每输出 token 时延 (TPOT)",
    "Tokens/s per user": "每用户 tokens/s",
    "Output tokens/s per GPU": "每 GPU 输出 tokens/s",
    "Output tokens/s": "输出 tokens/s",
    "Requests/s": "请求数/秒",
    "Max concurrency": "最大并发数",
    "Saturated (requests queue)": "已饱和（请求排队）",
    "Mean TTFT in a benchmark run": "基准测试中的平均 TTFT",
    "{ttft} ({n} requests)": "{ttft}（{n} 个请求）",
    "TTFT ≤ {x} ms met": "满足 TTFT ≤ {x} ms",
    "TPOT ≤ {x} ms met": "满足 TPOT ≤ {x} ms",
    "USD per million output tokens": "每百万输出 token 美元",
    "USD per hour": "每小时美元",
    "({n} days old)": "（{n} 天前）",
    "No deployment meets the targets.": "没有部署满足目标。",
    "Meets the targets: {names}.": "满足目标的部署：{names}。",
    "Cheapest of them: {name}, {usd} per million output tokens.": "其中最便宜的是 {name}，每百万输出 token {usd}。",
    "Serving memory per GPU": "推理服务每 GPU 显存",
    "Model weights": "模型权重",
    "KV cache pool": "KV 缓存池",
    "Activation workspace": "激活工作区",
    "CUDA graphs": "CUDA Graphs",
    "Other (context, NCCL)": "其他（上下文、NCCL）",
    "Total": "合计",
    "KV cache tokens per replica": "每副本 KV 缓存 token 数",
    "Time per output token by part (ms)": "每输出 token 耗时的构成（ms）",
    "GEMMs": "GEMM",
    "Expert GEMMs": "专家 GEMM",
    "Attention (KV cache)": "注意力（KV 缓存）",
    "Collectives": "集合通信",
    "Element-wise": "逐元素运算",
    "Kernel launches": "内核启动",
    "Engine CPU": "引擎 CPU",
    "Waiting for the host": "等待主机",
    "Each column is gpu-planner serve with the scenario's serve section on that plan's machine; cost per million "
    "output tokens is the on-demand hourly price of the instances one deployment needs divided by its output "
    "tokens/s, running all the time; '∞': requests queue without bound.":
        "每列是 gpu-planner serve 在该方案机器上按场景的推理服务设置得出的结果；每百万输出 token 成本 = 一个部署所需实例的"
        "按量小时价格 / 其输出 tokens/s，按持续运行计算；“∞”：请求队列无限增长。",
    "Serving: the scenario's serve section served by gpu-planner serve on each plan's machine; cost per million "
    "output tokens at the on-demand price of the instances one deployment needs, else at the price the instance has "
    "(the table names it).":
        "推理服务：场景的推理服务设置由 gpu-planner serve 在每个方案的机器上计算；每百万输出 token 成本按一个部署所需实例的"
        "按需价格计算，没有按需价格时按该实例已有的价格计算（表中注明）。",
    "Price basis": "计价方式",
    # header, footer, progress
    "GPU Capacity Planner {v} · generated {d}": "GPU 容量规划器 {v} · 生成于 {d}",
    "Page {i} of {n}": "第 {i} 页，共 {n} 页",
    "Writing the report": "正在写入报告",
    "Laying out the report": "正在排版报告",
    "Done": "完成",
}
