<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>AddInstancesDialog</name>
    <message>
        <source>Add machines to compare</source>
        <translation>添加要对比的机器</translation>
    </message>
</context>
<context>
    <name>Breakdown</name>
    <message>
        <source>GPU capacity</source>
        <translation>GPU 显存容量</translation>
    </message>
    <message>
        <source>parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>optimizer states</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>master weights</source>
        <translation>主权重</translation>
    </message>
    <message>
        <source>activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>logits and loss</source>
        <translation>logits 与损失</translation>
    </message>
    <message>
        <source>autocast weight cache</source>
        <translation>autocast 权重缓存</translation>
    </message>
    <message>
        <source>ZeRO gather buffers</source>
        <translation>ZeRO 聚合缓冲区</translation>
    </message>
    <message>
        <source>temporaries</source>
        <translation>临时张量</translation>
    </message>
    <message>
        <source>optimizer temporaries</source>
        <translation>优化器临时张量</translation>
    </message>
    <message>
        <source>other</source>
        <translation>其他</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>runtime overheads</source>
        <translation>运行时开销</translation>
    </message>
    <message>
        <source>compute</source>
        <translation>计算</translation>
    </message>
    <message>
        <source>recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>tensor parallel comm</source>
        <translation>张量并行通信</translation>
    </message>
    <message>
        <source>expert parallel comm</source>
        <translation>专家并行通信</translation>
    </message>
    <message>
        <source>context parallel comm</source>
        <translation>上下文并行通信</translation>
    </message>
    <message>
        <source>pipeline p2p</source>
        <translation>流水线点对点通信</translation>
    </message>
    <message>
        <source>pipeline bubble</source>
        <translation>流水线气泡</translation>
    </message>
    <message>
        <source>data parallel comm exposed</source>
        <translation>数据并行通信（未掩盖）</translation>
    </message>
    <message>
        <source>CPU offload transfers (PCIe)</source>
        <translation>CPU 卸载传输（PCIe）</translation>
    </message>
    <message>
        <source>optimizer step</source>
        <translation>优化器更新</translation>
    </message>
    <message>
        <source>prefill (time to first token)</source>
        <translation>预填充（首 token 延迟）</translation>
    </message>
    <message>
        <source>decode (every generated token)</source>
        <translation>解码（每个生成 token）</translation>
    </message>
</context>
<context>
    <name>Charts</name>
    <message>
        <source>Scaling efficiency</source>
        <translation>扩展效率</translation>
    </message>
    <message>
        <source>efficiency</source>
        <translation>效率</translation>
    </message>
    <message>
        <source>nodes</source>
        <translation>节点数</translation>
    </message>
    <message>
        <source>{name} (no overlap)</source>
        <translation>{name}（无重叠）</translation>
    </message>
    <message>
        <source>{name}, {detail}</source>
        <translation>{name}，{detail}</translation>
    </message>
    <message>
        <source>{line}: same as {others} (within {pt:g} point)</source>
        <translation>{line}：与 {others} 重合（相差在 {pt:g} 个百分点以内）</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>dashed, in each network&apos;s colour: the no-overlap reference 1/(1 + t_comm/t_compute)</source>
        <translation>虚线（与各网络同色）：无重叠参考 1/(1 + t_comm/t_compute)</translation>
    </message>
    <message>
        <source>Time against cost</source>
        <translation>时间与成本</translation>
    </message>
    <message>
        <source>time to train (days)</source>
        <translation>训练时间（天）</translation>
    </message>
    <message>
        <source>cost (USD)</source>
        <translation>成本（美元）</translation>
    </message>
    <message>
        <source>cost (USD, {basis})</source>
        <translation>成本（美元，{basis}）</translation>
    </message>
    <message>
        <source>GPU-hours</source>
        <translation>GPU 小时</translation>
    </message>
    <message>
        <source>seconds ago</source>
        <translation>秒前</translation>
    </message>
    <message>
        <source>Waiting for telemetry samples…</source>
        <translation>正在等待遥测采样…</translation>
    </message>
    <message>
        <source>GPU {n}</source>
        <translation>GPU {n}</translation>
    </message>
    <message>
        <source>Roofline</source>
        <translation>Roofline 模型</translation>
    </message>
    <message>
        <source>arithmetic intensity (FLOP/byte)</source>
        <translation>算术强度（FLOP/字节）</translation>
    </message>
    <message>
        <source>datasheet roof</source>
        <translation>规格表上限</translation>
    </message>
    <message>
        <source>measured roof</source>
        <translation>实测上限</translation>
    </message>
    <message>
        <source>measured GEMMs</source>
        <translation>实测 GEMM</translation>
    </message>
    <message>
        <source>No measurements yet: run the benchmarks</source>
        <translation>尚无测量结果：请运行基准测试</translation>
    </message>
    <message>
        <source>Pareto front</source>
        <translation>帕累托前沿</translation>
    </message>
    <message>
        <source>tokens/s per user</source>
        <translation>每用户 tokens/s</translation>
    </message>
    <message>
        <source>output tokens/s per GPU</source>
        <translation>每 GPU 输出 tokens/s</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>无</translation>
    </message>
</context>
<context>
    <name>Compare</name>
    <message>
        <source>GPU / instance</source>
        <translation>GPU / 实例</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>Layout (tp×pp×cp×ep×dp, ZeRO)</source>
        <translation>并行布局 (tp×pp×cp×ep×dp, ZeRO)</translation>
    </message>
    <message>
        <source>Memory per GPU</source>
        <translation>每 GPU 显存</translation>
    </message>
    <message>
        <source>Fits</source>
        <translation>可容纳</translation>
    </message>
    <message>
        <source>Cost per million tokens, on-demand</source>
        <translation>每百万 token 成本（按需）</translation>
    </message>
    <message>
        <source>Cost per million tokens, other price</source>
        <translation>每百万 token 成本（其他价格）</translation>
    </message>
    <message>
        <source>Serving: cost per million output tokens, on-demand</source>
        <translation>推理服务：每百万输出 token 成本（按需）</translation>
    </message>
    <message>
        <source>Serving: cost per million output tokens, other price</source>
        <translation>推理服务：每百万输出 token 成本（其他价格）</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>tight</source>
        <translation>余量不足</translation>
    </message>
    <message>
        <source>NO</source>
        <translation>否</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>单步耗时</translation>
    </message>
    <message>
        <source>Free memory per GPU</source>
        <translation>每 GPU 剩余显存</translation>
    </message>
    <message>
        <source>GPU memory, driver total</source>
        <translation>显存（驱动报告总量）</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>token/秒</translation>
    </message>
    <message>
        <source>MFU</source>
        <translation>算力利用率 (MFU)</translation>
    </message>
    <message>
        <source>Time to train</source>
        <translation>训练时间</translation>
    </message>
    <message>
        <source>GPU-hours</source>
        <translation>GPU 小时</translation>
    </message>
    <message>
        <source>Cost on-demand</source>
        <translation>按需实例成本</translation>
    </message>
    <message>
        <source>Cost reserved 1 yr</source>
        <translation>预留实例（1 年）成本</translation>
    </message>
    <message>
        <source>Cost spot</source>
        <translation>竞价实例成本</translation>
    </message>
    <message>
        <source>Checkpoint (resumable)</source>
        <translation>检查点（可恢复）</translation>
    </message>
    <message>
        <source>Checkpoint overhead</source>
        <translation>检查点开销</translation>
    </message>
    <message>
        <source>Host RAM per node</source>
        <translation>每节点主机内存</translation>
    </message>
    <message>
        <source>Input pipeline</source>
        <translation>输入管线</translation>
    </message>
    <message>
        <source>Serving: TTFT</source>
        <translation>推理服务：首 token 时延 (TTFT)</translation>
    </message>
    <message>
        <source>Serving: TPOT</source>
        <translation>推理服务：每输出 token 时延 (TPOT)</translation>
    </message>
    <message>
        <source>Serving: tokens/s per user</source>
        <translation>推理服务：每用户 tokens/s</translation>
    </message>
    <message>
        <source>Serving: output tokens/s per GPU</source>
        <translation>推理服务：每 GPU 输出 tokens/s</translation>
    </message>
    <message>
        <source>Serving: fits / saturated</source>
        <translation>推理服务：可容纳 / 饱和</translation>
    </message>
    <message>
        <source>Serving: latency targets met</source>
        <translation>推理服务：满足时延目标</translation>
    </message>
    <message>
        <source>no price</source>
        <translation>无价格</translation>
    </message>
    <message>
        <source>no {kind} price</source>
        <translation>无{kind}价格</translation>
    </message>
    <message>
        <source>fits, saturated (requests queue)</source>
        <translation>可容纳，已饱和（请求排队）</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>可容纳</translation>
    </message>
    <message>
        <source>no ({missed})</source>
        <translation>否（{missed}）</translation>
    </message>
    <message>
        <source>no published price</source>
        <translation>未公布价格</translation>
    </message>
    <message>
        <source>→ $ at {rate}</source>
        <translation>→ 按 {rate} 换算为美元</translation>
    </message>
    <message>
        <source>Plan&apos;s own settings</source>
        <translation>方案自有设置</translation>
    </message>
    <message>
        <source>Prices (currency, date)</source>
        <translation>价格（币种、日期）</translation>
    </message>
</context>
<context>
    <name>ComparePage</name>
    <message>
        <source>Add machines…</source>
        <translation>添加机器…</translation>
    </message>
    <message>
        <source>Metric</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>Memory per GPU</source>
        <translation>每 GPU 显存</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Cost</source>
        <translation>成本</translation>
    </message>
    <message>
        <source>Serving: {error}</source>
        <translation>推理服务：{error}</translation>
    </message>
    <message>
        <source>1 plan; bold = best among the plans that fit</source>
        <translation>1 个方案；粗体为可容纳方案中的最优值</translation>
    </message>
    <message>
        <source>{n} plans; bold = best among the plans that fit</source>
        <translation>{n} 个方案；粗体为可容纳方案中的最优值</translation>
    </message>
    <message>
        <source>Time to train (days)</source>
        <translation>训练时间（天）</translation>
    </message>
    <message>
        <source>Step time (s)</source>
        <translation>单步耗时 (s)</translation>
    </message>
    <message>
        <source>Cost on-demand (USD)</source>
        <translation>按需实例成本（美元）</translation>
    </message>
    <message>
        <source>Decode tokens/s</source>
        <translation>解码 token/秒</translation>
    </message>
    <message>
        <source>USD per million tokens, on-demand</source>
        <translation>每百万 token 美元（按需）</translation>
    </message>
    <message>
        <source>no on-demand price</source>
        <translation>无按需价格</translation>
    </message>
    <message>
        <source>no price</source>
        <translation>无价格</translation>
    </message>
</context>
<context>
    <name>Engine</name>
    <message>
        <source>calibration profile {name!r} ({summary})</source>
        <translation>校准配置 {name!r}（{summary}）</translation>
    </message>
    <message>
        <source>prepare_model_for_kbit_training turns gradient checkpointing on (full recomputation)</source>
        <translation>prepare_model_for_kbit_training 会开启梯度检查点（完全重计算）</translation>
    </message>
    <message>
        <source>recipe {recipe} (default for {gpu} with {framework}; --recipe)</source>
        <translation>精度方案 {recipe}（{gpu} 搭配 {framework} 时的默认值；可用 --recipe 指定）</translation>
    </message>
    <message>
        <source>attention eager: transformers runs {family} without SDPA (--attention flash for FlashAttention-2)</source>
        <translation>注意力 eager：transformers 运行 {family} 时不支持 SDPA（FlashAttention-2 请用 --attention flash）</translation>
    </message>
    <message>
        <source>full recomputation</source>
        <translation>完全重计算</translation>
    </message>
    <message>
        <source>selective recomputation</source>
        <translation>选择性重计算</translation>
    </message>
    <message>
        <source>ZeRO-{z}</source>
        <translation>ZeRO-{z}</translation>
    </message>
    <message>
        <source>micro-batch {b} (more accumulation)</source>
        <translation>微批大小减为 {b}，梯度累积步数增加</translation>
    </message>
    <message>
        <source>{n}x tensor parallel (2x the GPUs)</source>
        <translation>{n} 路张量并行，GPU 数翻倍</translation>
    </message>
    <message>
        <source>sequence parallelism</source>
        <translation>序列并行</translation>
    </message>
    <message>
        <source>{n}x pipeline parallel (2x the GPUs)</source>
        <translation>{n} 路流水线并行，GPU 数翻倍</translation>
    </message>
    <message>
        <source>{n}x data parallel (2x the GPUs)</source>
        <translation>{n} 路数据并行，GPU 数翻倍</translation>
    </message>
    <message>
        <source>offload optimizer states to the CPU</source>
        <translation>将优化器状态卸载到 CPU</translation>
    </message>
    <message>
        <source>bf16 weights and optimizer states</source>
        <translation>权重和优化器状态改用 bf16</translation>
    </message>
    <message>
        <source>SDPA / flash attention</source>
        <translation>改用 SDPA / Flash Attention</translation>
    </message>
    <message>
        <source>8-bit AdamW</source>
        <translation>8 位 AdamW</translation>
    </message>
    <message>
        <source>LoRA adapters instead of full fine-tuning (PEFT, rank 8)</source>
        <translation>改用 LoRA 适配器代替全参数微调（PEFT，秩 8）</translation>
    </message>
    <message>
        <source>QLoRA: LoRA on a 4-bit base (bitsandbytes NF4)</source>
        <translation>QLoRA：在 4 位基座上训练 LoRA（bitsandbytes NF4）</translation>
    </message>
    <message>
        <source> + </source>
        <translation> + </translation>
    </message>
    <message>
        <source>fits; no change suggested: the whole run takes under {minutes:.0f} minutes, too short for more GPUs to pay for their start-up</source>
        <translation>可容纳；不建议改动：整个任务不到 {minutes:.0f} 分钟，时间太短，增加 GPU 抵不上其启动开销</translation>
    </message>
    <message>
        <source>fits; no single change makes it faster</source>
        <translation>可容纳；没有哪一项单独改动能让它更快</translation>
    </message>
    <message>
        <source>saves {gb:.1f} GB</source>
        <translation>节省 {gb:.1f} GB</translation>
    </message>
    <message>
        <source>uses {gb:.1f} GB more</source>
        <translation>多用 {gb:.1f} GB</translation>
    </message>
    <message>
        <source>costs {pct:.0f}% more time</source>
        <translation>耗时增加 {pct:.0f}%</translation>
    </message>
    <message>
        <source>is {pct:.0f}% faster</source>
        <translation>提速 {pct:.0f}%</translation>
    </message>
    <message>
        <source>{change} {memory} and {time}</source>
        <translation>{change}（{memory}，{time}）</translation>
    </message>
    <message>
        <source>{change} {memory} and {time} (still does not fit)</source>
        <translation>{change}（{memory}，{time}，仍无法容纳）</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>fits; faster with: {changes} (no more GPUs: the whole run takes under {minutes:.0f} minutes)</source>
        <translation>可容纳；以下改动可提速：{changes}（不建议增加 GPU：整个任务不到 {minutes:.0f} 分钟）</translation>
    </message>
    <message>
        <source>fits; faster with: {changes}</source>
        <translation>可容纳；以下改动可提速：{changes}</translation>
    </message>
    <message>
        <source>does not fit by {gb:.1f} GB: {changes}</source>
        <translation>无法容纳，超出 {gb:.1f} GB：{changes}</translation>
    </message>
    <message>
        <source>memory.peak_bytes is what torch.cuda.max_memory_allocated would report on the most loaded GPU (framework {framework})</source>
        <translation>memory.peak_bytes 即负载最重的 GPU 上 torch.cuda.max_memory_allocated 会报告的值（框架 {framework}）</translation>
    </message>
    <message>
        <source>device memory adds the CUDA context ({context_gb:g} GB), NCCL buffers and a caching-allocator reserve of {reserve:g}% of the peak ({plain:g}% without, {full:g}% with full recomputation); fits compares that with {gb:g} GB x 2^30 x {nvml:g} (what NVML reports)</source>
        <translation>设备显存另加 CUDA 上下文（{context_gb:g} GB）、NCCL 缓冲区和缓存分配器预留（峰值的 {reserve:g}%；不重计算时 {plain:g}%，完全重计算时 {full:g}%）；是否可容纳即与 {gb:g} GB x 2^30 x {nvml:g}（NVML 报告的容量）比较</translation>
    </message>
    <message>
        <source>activations follow the Hugging Face transformers 5.x implementation (eager PyTorch ops, autograd saving rules); loss via logits.float() and cross_entropy</source>
        <translation>激活值按 Hugging Face transformers 5.x 的实现计算（eager 模式 PyTorch 算子、autograd 保存规则）；损失经 logits.float() 和 cross_entropy 计算</translation>
    </message>
    <message>
        <source>training loop: loss = model(...).loss; loss.backward(); optimizer.step(); zero_grad(set_to_none=True)</source>
        <translation>训练循环：loss = model(...).loss; loss.backward(); optimizer.step(); zero_grad(set_to_none=True)</translation>
    </message>
    <message>
        <source>activations follow Megatron-LM with fused kernels (Korthikanti et al. 2022, generalised)</source>
        <translation>激活值按使用融合内核的 Megatron-LM 计算（Korthikanti 等 2022，已推广）</translation>
    </message>
    <message>
        <source>bitsandbytes&apos; paged 8-bit AdamW keeps its states in CUDA managed memory (memory.paged_optimizer_states_bytes): outside max_memory_allocated and the fit, paged to the host when the GPU is full</source>
        <translation>bitsandbytes 的分页 8 位 AdamW 将其状态保存在 CUDA 托管内存中（memory.paged_optimizer_states_bytes）：不计入 max_memory_allocated 和容量判断，GPU 显存不足时换页到主机内存</translation>
    </message>
    <message>
        <source>PyTorch&apos;s foreach AdamW allocates one parameter-sized temporary in the optimizer step</source>
        <translation>PyTorch 的 foreach AdamW 在优化器步骤中分配一个与参数同样大小的临时张量</translation>
    </message>
    <message>
        <source>PyTorch&apos;s fused AdamW (Hugging Face Trainer&apos;s default): no temporaries, one kernel per step (--optimizer-impl)</source>
        <translation>PyTorch 融合 AdamW（Hugging Face Trainer 的默认）：无临时张量，每步一个内核（--optimizer-impl）</translation>
    </message>
    <message>
        <source>PyTorch&apos;s for-loop AdamW: temporaries of the largest tensor only, one tensor at a time (--optimizer-impl)</source>
        <translation>PyTorch 逐张量循环 AdamW：仅有最大张量大小的临时张量，每次处理一个张量（--optimizer-impl）</translation>
    </message>
    <message>
        <source>ZeRO-1 as torch ZeroRedundancyOptimizer</source>
        <translation>ZeRO-1 按 torch ZeroRedundancyOptimizer 计算</translation>
    </message>
    <message>
        <source>ZeRO-2 as FSDP SHARD_GRAD_OP</source>
        <translation>ZeRO-2 按 FSDP SHARD_GRAD_OP 计算</translation>
    </message>
    <message>
        <source>ZeRO-3 as FSDP2 fully_shard on each decoder layer and the model: one layer prefetched, the root&apos;s embedding and output layer gathered for the whole forward and backward, one layer&apos;s reduce-scatter input in flight</source>
        <translation>ZeRO-3 按 FSDP2 对每个解码层及整个模型调用 fully_shard 计算：预取一层；根模块的嵌入层和输出层在整个前向和反向期间保持聚合；同时有一层的 reduce-scatter 输入在途</translation>
    </message>
    <message>
        <source>reshard_after_forward=False: every layer stays gathered from its forward to its backward, which all-gathers nothing</source>
        <translation>reshard_after_forward=False：每一层从前向到反向一直保持聚合，反向不再做 all-gather</translation>
    </message>
    <message>
        <source>tensor parallelism as torch&apos;s parallelize_module (DTensor, torchtitan&apos;s Llama plan, loss_parallel): each layer takes at least DTensor&apos;s host time, {fwd_ms:.1f} ms forward and {bwd_ms:.1f} ms backward for a Llama layer on the reference host, scaled by the host&apos;s dispatch speed (probe calibration)</source>
        <translation>张量并行按 torch 的 parallelize_module 计算（DTensor、torchtitan 的 Llama 方案、loss_parallel）：每层至少耗费 DTensor 的主机时间，在参考主机上一个 Llama 层前向 {fwd_ms:.1f} ms、反向 {bwd_ms:.1f} ms，并按主机的分发速度缩放（探测校准）</translation>
    </message>
    <message>
        <source>CPU offload: the optimizer steps this GPU&apos;s shard on the host at {rate:.3g} elements/s ({impl} AdamW on a 16-core host) and the shards cross PCIe at {pcie:g} GB/s, neither overlapped with the GPU&apos;s work</source>
        <translation>CPU 卸载：优化器在主机上以每秒 {rate:.3g} 个元素更新本 GPU 的分片（16 核主机上的 {impl} AdamW），分片经 PCIe 以 {pcie:g} GB/s 传输，两者都不与 GPU 的工作重叠</translation>
    </message>
    <message>
        <source>selective recomputation as Megatron defines it: attention scores recomputed in backward</source>
        <translation>选择性重计算按 Megatron 的定义：反向传播时重新计算注意力分数</translation>
    </message>
    <message>
        <source>full recomputation keeps each layer&apos;s input and recomputes the layer in backward</source>
        <translation>完全重计算保留每层的输入，反向传播时重新计算该层</translation>
    </message>
    <message>
        <source>sliding window &lt;= sequence: transformers builds an explicit attention mask</source>
        <translation>滑动窗口 &lt;= 序列长度：transformers 会构建显式注意力掩码</translation>
    </message>
    <message>
        <source>LoRA as PEFT&apos;s get_peft_model: the base frozen, adapters of rank {rank} on {targets} in {dtype} ({n:,} trainable parameters), dropout {dropout:g}; the frozen base keeps no inputs for weight gradients and its backward computes data gradients only</source>
        <translation>LoRA 按 PEFT 的 get_peft_model 计算：基座冻结，{targets} 上秩为 {rank} 的 {dtype} 适配器（{n:,} 个可训练参数），dropout {dropout:g}；冻结的基座不为权重梯度保存输入，其反向传播只计算数据梯度</translation>
    </message>
    <message>
        <source>MFU of a LoRA step counts the FLOPs it runs: the forward, the base&apos;s data gradients and the adapters&apos; three passes (no weight gradients for the base)</source>
        <translation>LoRA 步骤的 MFU 按其实际运行的 FLOPs 计算：前向、基座的数据梯度和适配器的三次计算（基座没有权重梯度）</translation>
    </message>
    <message>
        <source>QLoRA: the layers&apos; linear weights as bitsandbytes Linear4bit (NF4, double quantization: {bpp:.4f} bytes per weight), dequantized to bf16 for each GEMM in forward and backward; embeddings, norms and the output layer in {bits} bits</source>
        <translation>QLoRA：各层线性权重为 bitsandbytes Linear4bit（NF4，双重量化：每个权重 {bpp:.4f} 字节），前向和反向的每次 GEMM 都反量化为 bf16；嵌入层、归一化层和输出层为 {bits} 位</translation>
    </message>
    <message>
        <source>KV cache holds K and V of every layer for prompt + generated tokens (grouped-query: KV heads only; MLA: the compressed latent)</source>
        <translation>KV 缓存保存每一层提示词与生成 token 的 K 和 V（分组查询注意力：仅 KV 头；MLA：压缩后的潜向量）</translation>
    </message>
    <message>
        <source>prefill peak as a hand-written model(input_ids) loop: logits for every prompt token in 16 bits</source>
        <translation>预填充峰值按手写的 model(input_ids) 循环计算：每个提示词 token 的 logits 为 16 位</translation>
    </message>
    <message>
        <source>prefill peak as transformers 5.x model.generate(): logits of the last token only (logits_to_keep=1), one layer&apos;s intermediates for the whole prompt</source>
        <translation>预填充峰值按 transformers 5.x 的 model.generate() 计算：只有最后一个 token 的 logits（logits_to_keep=1），以及整个提示词在一层中的中间结果</translation>
    </message>
    <message>
        <source>weights in {dtype}; embeddings, output layer and norms in 16 bits</source>
        <translation>权重为 {dtype}；嵌入层、输出层和归一化层为 16 位</translation>
    </message>
    <message>
        <source>non-transformer: activations from the preset&apos;s bytes per sample</source>
        <translation>非 Transformer 模型：激活值取自预设的每样本字节数</translation>
    </message>
    <message>
        <source>step time from --mfu {mfu:g} (model FLOPs over peak), not the model</source>
        <translation>单步时间由 --mfu {mfu:g}（模型 FLOPs 占峰值之比）得出，而非性能模型</translation>
    </message>
    <message>
        <source>step time from --achieved-tflops {tflops:g} per GPU, counting hardware FLOPs (recomputation included) as Narayanan et al. 2021 do</source>
        <translation>单步时间由每 GPU --achieved-tflops {tflops:g} 得出，按 Narayanan 等 2021 的做法计入硬件 FLOPs（含重计算）</translation>
    </message>
    <message>
        <source>no --tokens: time to train and cost need a token budget</source>
        <translation>未指定 --tokens：训练时间和成本需要 token 预算</translation>
    </message>
    <message>
        <source>inference speed of Hugging Face transformers run eagerly ({api}): per token the slower of the GPU (weights, the KV cache read by attention and copied again by DynamicCache) and the host (one Python dispatch per op, {host_us:.0f} us each), at key lengths the process has met before</source>
        <translation>推理速度按 Hugging Face transformers 的 eager 模式（{api}）估算：每个 token 取 GPU（读取权重、注意力读取 KV 缓存、DynamicCache 再复制一遍 KV 缓存）与主机（每个算子一次 Python 调度，每次 {host_us:.0f} us）两者中较慢的一方，且按进程已遇到过的键长度计</translation>
    </message>
    <message>
        <source>for comparison, the time a serving engine (vLLM: CUDA graphs, fused kernels) takes per token for the same batch on the same GPUs is given beside it; gpu-planner serve sizes it under load</source>
        <translation>作为对比，同一批次在相同 GPU 上用推理服务引擎（vLLM：CUDA Graphs、融合算子）每 token 的耗时另列在旁；负载下的规模请用 gpu-planner serve 估算</translation>
    </message>
    <message>
        <source>a call at new lengths is slower: SDPA&apos;s cuDNN backend (PyTorch&apos;s choice on this GPU) builds a graph for every new key length, about {ms:.0f} ms more per token (the first-call time); later calls at the same lengths run at the warm rate</source>
        <translation>新长度下的调用更慢：SDPA 的 cuDNN 后端（PyTorch 在此 GPU 上的选择）会为每个新的键长度构建一次计算图，每 token 约多 {ms:.0f} ms（即首次调用耗时）；之后相同长度的调用按预热后的速度运行</translation>
    </message>
    <message>
        <source>16-bit GEMMs {lo:.0%}-{hi:.0%} of peak at the models&apos; shapes, sustained</source>
        <translation>16 位 GEMM 在模型形状下持续运行时达峰值的 {lo:.0%}-{hi:.0%}</translation>
    </message>
    <message>
        <source>GEMM {gemm:.0%} of peak, +{us:.0f} us per GEMM</source>
        <translation>GEMM 达峰值的 {gemm:.0%}，每次 GEMM 另加 {us:.0f} 微秒</translation>
    </message>
    <message>
        <source>memory-bound kernels {bw:.0%} of HBM bandwidth</source>
        <translation>访存受限内核达 HBM 带宽的 {bw:.0%}</translation>
    </message>
    <message>
        <source>eager dispatch {us:.1f} us per op on the host ({ratio:.2f}x the reference host)</source>
        <translation>主机上 eager 模式每个算子的调度开销 {us:.1f} us（为参考主机的 {ratio:.2f} 倍）</translation>
    </message>
    <message>
        <source>intra-node bus bandwidth {gb_s:.0f} GB/s</source>
        <translation>节点内总线带宽 {gb_s:.0f} GB/s</translation>
    </message>
    <message>
        <source>measured on {device} {date}: {parts}</source>
        <translation>测量于 {device}（{date}）：{parts}</translation>
    </message>
    <message>
        <source>no validated run on this GPU to check it against (rule: a profile never moves a validated run&apos;s step time away from its measurement)</source>
        <translation>此 GPU 上没有可供核对的验证运行（规则：校准配置绝不让已验证运行的单步时间偏离其实测值）</translation>
    </message>
    <message>
        <source>kept as measured: it moves none of {n} validated run(s) away from the measured step time</source>
        <translation>按实测保留：它没有让 {n} 个已验证运行中的任何一个偏离实测单步时间</translation>
    </message>
    <message>
        <source>GEMM and bandwidth terms discarded (defaults used): any part of them moves one of {n} validated run(s) away from the measured step time</source>
        <translation>已舍弃 GEMM 与带宽项（改用默认值）：其任何部分都会让 {n} 个已验证运行中的某一个偏离实测单步时间</translation>
    </message>
    <message>
        <source>GEMM and bandwidth terms moved {pct:.0%} back toward the defaults, so that none of {n} validated run(s) is further from its measured step time than without the profile</source>
        <translation>GEMM 与带宽项向默认值回调 {pct:.0%}，使 {n} 个已验证运行中没有任何一个比不用校准配置时更偏离实测单步时间</translation>
    </message>
    <message>
        <source>{name}: {m:.1f}M parameters (non-transformer)</source>
        <translation>{name}：{m:.1f}M 参数（非 Transformer）</translation>
    </message>
    <message>
        <source>{n} layers</source>
        <translation>{n} 层</translation>
    </message>
    <message>
        <source>hidden {n}</source>
        <translation>隐藏维度 {n}</translation>
    </message>
    <message>
        <source>{n} heads</source>
        <translation>{n} 个注意力头</translation>
    </message>
    <message>
        <source>{n} KV heads</source>
        <translation>{n} 个 KV 头</translation>
    </message>
    <message>
        <source>{n} experts top-{k}</source>
        <translation>{n} 个专家（top-{k}）</translation>
    </message>
    <message>
        <source>{name}: {b:.2f}B parameters ({parts})</source>
        <translation>{name}：{b:.2f}B 参数（{parts}）</translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>{instance}: the network is not in the spec data; {fabric} assumed</source>
        <translation>{instance}：规格数据中没有其网络信息；假定为 {fabric}</translation>
    </message>
    <message>
        <source>inter-node network {fabric} with {nics} NICs per node (default; --fabric, --nics-per-node)</source>
        <translation>节点间网络 {fabric}，每节点 {nics} 块网卡（默认值；可用 --fabric、--nics-per-node 指定）</translation>
    </message>
    <message>
        <source>intra-node link: {link}</source>
        <translation>节点内互连：{link}</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>no NVIDIA driver found (libnvidia-ml is not installed): NVIDIA GPU telemetry is unavailable</source>
        <translation>未找到 NVIDIA 驱动（未安装 libnvidia-ml）：无法获取 NVIDIA GPU 遥测数据</translation>
    </message>
    <message>
        <source>the NVIDIA driver is installed but not loaded (no GPU, or the kernel module is missing)</source>
        <translation>NVIDIA 驱动已安装但未加载（没有 GPU，或缺少内核模块）</translation>
    </message>
    <message>
        <source>the NVIDIA driver and its kernel module have different versions: reboot or reinstall the driver</source>
        <translation>NVIDIA 驱动与其内核模块版本不一致：请重启或重新安装驱动</translation>
    </message>
    <message>
        <source>no permission to query the NVIDIA driver (check /dev/nvidia* access)</source>
        <translation>无权限查询 NVIDIA 驱动（请检查 /dev/nvidia* 的访问权限）</translation>
    </message>
    <message>
        <source>NVML is unavailable: {error}</source>
        <translation>NVML 不可用：{error}</translation>
    </message>
    <message>
        <source>the nvidia-ml-py package is not installed: NVIDIA telemetry is unavailable</source>
        <translation>未安装 nvidia-ml-py 包：无法获取 NVIDIA 遥测数据</translation>
    </message>
    <message>
        <source>NVML ready</source>
        <translation>NVML 已就绪</translation>
    </message>
    <message>
        <source>the CPU offload does not fit the host: it needs {need:,.0f} GB of RAM per node ({states:,.0f} GB offloaded states), the instance has {ram:,.0f} GB; offload less (--offload optimizer), shard more (--zero 3, more nodes) or choose an instance with more RAM</source>
        <translation>CPU 卸载放不下主机内存：每节点需要 {need:,.0f} GB 内存（卸载状态 {states:,.0f} GB），实例只有 {ram:,.0f} GB；减少卸载（--offload optimizer）、加大分片（--zero 3、更多节点）或选择内存更大的实例</translation>
    </message>
    <message>
        <source>host RAM is short: the plan needs {need:,.0f} GB per node, the instance has {ram:,.0f} GB</source>
        <translation>主机内存不足：方案每节点需要 {need:,.0f} GB，实例只有 {ram:,.0f} GB</translation>
    </message>
    <message>
        <source>the input pipeline is CPU-bound: the GPUs take {need:,.0f} samples/s per node, {cores:,.0f} cores decode {have:,.0f}; the GPUs wait ({util:.0f}% busy); decode on the GPU (NVIDIA DALI), store pre-decoded or smaller images, or choose more vCPUs</source>
        <translation>输入管线受 CPU 限制：GPU 每节点消耗 {need:,.0f} 样本/秒，{cores:,.0f} 个核只能解码 {have:,.0f}；GPU 在等待（忙碌 {util:.0f}%）；在 GPU 上解码（NVIDIA DALI）、预先解码或缩小图像，或选择更多 vCPU</translation>
    </message>
    <message>
        <source>the input pipeline is storage-bound: the GPUs read {need:.2f} GB/s per node, {where} gives {have:.2f} GB/s; cache the dataset on local NVMe or in RAM</source>
        <translation>输入管线受存储限制：GPU 每节点读取 {need:.2f} GB/s，{where} 只提供 {have:.2f} GB/s；把数据集缓存到本地 NVMe 或内存</translation>
    </message>
    <message>
        <source>checkpoints cost {pct:.0f}% of training time ({write:,.0f} s per save every {every:,.0f} min); save less often, save asynchronously (torch.distributed.checkpoint.async_save) or write faster storage</source>
        <translation>检查点占训练时间的 {pct:.0f}%（每 {every:,.0f} 分钟保存一次，每次 {write:,.0f} 秒）；减少保存频率、异步保存（torch.distributed.checkpoint.async_save）或使用更快的存储</translation>
    </message>
    <message>
        <source>{kept} checkpoints need {need:,.0f} GB per node, more than the instance&apos;s {have:,.0f} GB of local NVMe; keep fewer or write to shared storage</source>
        <translation>{kept} 个检查点每节点需要 {need:,.0f} GB，超过实例 {have:,.0f} GB 的本地 NVMe；少保留几个或写到共享存储</translation>
    </message>
    <message>
        <source>saturated: {what} holds {n:,.0f} running requests; the rest queue ({how})</source>
        <translation>已饱和：{what} 最多容纳 {n:,.0f} 个运行中的请求；其余请求排队（{how}）</translation>
    </message>
    <message>
        <source>{engine} at steady state: continuous batching, chunked prefill of at most {tokens} tokens per step, at most {seqs} running requests, KV pages of {block} tokens, gpu_memory_utilization {gmu:g}</source>
        <translation>{engine} 稳态：连续批处理，每步分块预填充最多 {tokens} 个 token，最多 {seqs} 个运行中的请求，KV 页大小 {block} 个 token，gpu_memory_utilization {gmu:g}</translation>
    </message>
    <message>
        <source>per-step engine overhead {ms:.2f} ms ({source})</source>
        <translation>引擎每步开销 {ms:.2f} 毫秒（{source}）</translation>
    </message>
    <message>
        <source>the KV cache takes {gmu:g} of the memory the weights, workspace, CUDA graphs and context leave free (TensorRT-LLM free_gpu_memory_fraction), not of the whole GPU</source>
        <translation>KV 缓存占权重、工作区、CUDA Graphs 和上下文之外剩余显存的 {gmu:g}（TensorRT-LLM free_gpu_memory_fraction），而非整张 GPU 的比例</translation>
    </message>
    <message>
        <source>host time {us:.1f} us per running request per step, beside the GPU step (overlap scheduler; TensorRT-LLM PR #10273, measured on a Grace host): a step takes the longer of the two</source>
        <translation>主机时间：每个运行中的请求每步 {us:.1f} us，与 GPU 步并行（重叠调度器；TensorRT-LLM PR #10273，在 Grace 主机上测得）：一步取两者中较长者</translation>
    </message>
    <message>
        <source>the engine&apos;s CPU time per running request is not modelled (no measurement found for {engine}); at thousands of running requests a small model can be host-bound</source>
        <translation>未建模引擎每个运行中请求的 CPU 时间（未找到 {engine} 的测量数据）；运行请求达数千时，小模型可能受主机限制</translation>
    </message>
    <message>
        <source>a running request holds the KV pages of its prompt and on average {held:.0f}% of its output&apos;s (pages taken as tokens are generated, or the whole output reserved at admission); no prefix caching; CUDA graphs {graph:.2f} GiB per GPU</source>
        <translation>运行中的请求持有其提示词的 KV 页，以及平均 {held:.0f}% 的输出 KV 页（随生成逐步分配，或在接纳时预留整个输出）；不计前缀缓存；CUDA Graphs 每 GPU {graph:.2f} GiB</translation>
    </message>
    <message>
        <source>tokens/s per user is 1 / TPOT; requests/s from Little&apos;s law (running requests / end-to-end latency)</source>
        <translation>每用户 token/秒 = 1 / TPOT；每秒请求数按 Little 定律计算（运行中的请求数 / 端到端延迟）</translation>
    </message>
    <message>
        <source>TTFT at steady state: the prompt&apos;s prefill chunks and its wait behind other prompts&apos; prefill, arrivals taken as independent</source>
        <translation>稳态 TTFT：提示词各预填充分块的时间，加上排在其他提示词预填充之后的等待，请求到达视为相互独立</translation>
    </message>
    <message>
        <source>benchmark TTFT: the mean a closed-loop benchmark of {n:,} requests reports (aiperf --concurrency, vllm bench serve --max-concurrency): its {c:,} clients start together on an idle server, so the first round&apos;s prompts queue behind each other&apos;s prefill; its median stays the steady state&apos;s while under half the requests are in that round</source>
        <translation>基准测试 TTFT：{n:,} 个请求的闭环基准测试（aiperf --concurrency、vllm bench serve --max-concurrency）报告的平均值：其 {c:,} 个客户端在空闲服务器上同时开始，因此第一轮的提示词彼此排队等待预填充；当第一轮请求不到总数一半时，其中位数仍为稳态值</translation>
    </message>
    <message>
        <source>{gpu}: architecture unknown (no arch in its spec row), so whether {engine} runs {wd} weights and a {kd} KV cache on it is not checked</source>
        <translation>{gpu}：架构未知（其规格行没有 arch），因此未检查 {engine} 能否在其上运行 {wd} 权重和 {kd} KV 缓存</translation>
    </message>
    <message>
        <source>vLLM&apos;s installation docs from v0.31 ask for compute capability 7.5 or newer; {gpu} ({arch}) needs an earlier vLLM</source>
        <translation>vLLM 自 v0.31 起的安装文档要求计算能力 7.5 或更高；{gpu}（{arch}）需要更早版本的 vLLM</translation>
    </message>
    <message>
        <source>{wd} weights on {gpu} ({arch}): no {wd} tensor cores, so the GEMMs dequantise the weights to 16 bits (weight-only Marlin) and run at the 16-bit rate</source>
        <translation>{gpu}（{arch}）上的 {wd} 权重：没有 {wd} Tensor Core，GEMM 先把权重反量化为 16 位（仅权重量化的 Marlin 内核），按 16 位速率运行</translation>
    </message>
    <message>
        <source>fp8 KV cache on {gpu} ({arch}): fp8_e5m2; {engine}&apos;s default e4m3 needs compute capability 8.9 in its Triton attention kernels (vLLM issues #26431, #54219)</source>
        <translation>{gpu}（{arch}）上的 fp8 KV 缓存：使用 fp8_e5m2；{engine} 默认的 e4m3 在其 Triton 注意力内核中需要计算能力 8.9（vLLM issue #26431、#54219）</translation>
    </message>
    <message>
        <source>{gpu} ({arch}): deployments with {skipped} skipped ({engine} does not run them there)</source>
        <translation>{gpu}（{arch}）：已跳过使用 {skipped} 的部署（{engine} 不能在该 GPU 上运行它们）</translation>
    </message>
    <message>
        <source>{machine}: skipped, {engine} does not run on {gpu} ({arch})</source>
        <translation>{machine}：已跳过，{engine} 不能在 {gpu}（{arch}）上运行</translation>
    </message>
    <message>
        <source>Pareto front: {n:,} points with more than {factor}x the replicas their layout needs for this load (up to {gpus:,} GPUs) left out</source>
        <translation>帕累托前沿：已略去 {n:,} 个副本数超过该布局承载此负载所需 {factor} 倍的点（最多 {gpus:,} 块 GPU）</translation>
    </message>
    <message>
        <source>plans on one machine and GPU count within {pct:g}% of each other in time and cost are one row, the simplest of them (fewest model-parallel axes, no interleaving or sequence parallelism, least recomputation, lowest ZeRO stage and micro-batch); &apos;+N similar&apos; counts the others</source>
        <translation>同一机器、同一 GPU 数下，时间和成本相差都在 {pct:g}% 以内的方案合为一行，显示其中最简单的一个（模型并行维度最少、不用交错调度和序列并行、重计算最少、ZeRO 阶段和微批最小）；“+N 个相似”为其余方案的数目</translation>
    </message>
    <message>
        <source>fastest first: plans within {pct:g}% or {minutes:g} minutes of the fastest, whichever is more, count as equally fast (a run&apos;s start-up, minutes, is not in the estimate), and of those the fewest GPUs, then the cheapest, rank first; each machine&apos;s best plan at each GPU count comes before the slower and dearer plans of that machine and count</source>
        <translation>最快优先：与最快方案相差在 {pct:g}% 或 {minutes:g} 分钟以内（取较大者）的方案视为同样快（估算不含任务数分钟的启动时间），其中 GPU 最少者优先，其次最便宜者；每台机器在每个 GPU 数下的最佳方案排在该机器、该 GPU 数下更慢更贵的方案之前</translation>
    </message>
    <message>
        <source>cheapest first at the price basis (equal costs: the faster first); each machine&apos;s best plan at each GPU count comes before the slower and dearer plans of that machine and count</source>
        <translation>按所选价格类型最便宜优先（成本相同则较快者优先）；每台机器在每个 GPU 数下的最佳方案排在该机器、该 GPU 数下更慢更贵的方案之前</translation>
    </message>
    <message>
        <source>at most {pct:g}% longer</source>
        <translation>最多慢 {pct:g}%</translation>
    </message>
    <message>
        <source>at most {minutes:g} minutes longer</source>
        <translation>最多慢 {minutes:g} 分钟</translation>
    </message>
    <message>
        <source>the fastest plan ({gpus:,} GPUs) is below the rows shown: the plans shown use fewer GPUs or cost less and take {slower}</source>
        <translation>最快的方案（{gpus:,} 块 GPU）不在所示行中：所示方案 GPU 更少或成本更低，且{slower}</translation>
    </message>
    <message>
        <source>the fastest plan ({gpus:,} GPUs) is #{rank}: the plans above it use fewer GPUs or cost less and take {slower}</source>
        <translation>最快的方案（{gpus:,} 块 GPU）排第 {rank}：排在它前面的方案 GPU 更少或成本更低，且{slower}</translation>
    </message>
    <message>
        <source>as instances on {fabric} with {gpus} {gpu} GPUs have (spec data)</source>
        <translation>与规格库中使用 {fabric}、配备 {gpus} 个 {gpu} GPU 的实例相同</translation>
    </message>
    <message>
        <source>as instances on {fabric} with {gpus} GPUs have (spec data)</source>
        <translation>与规格库中使用 {fabric}、配备 {gpus} 个 GPU 的实例相同</translation>
    </message>
    <message>
        <source>as instances on {fabric} have (spec data)</source>
        <translation>与规格库中使用 {fabric} 的实例相同</translation>
    </message>
    <message>
        <source>as instances with {gpus} GPUs on networks like {fabric} have (spec data)</source>
        <translation>与规格库中配备 {gpus} 个 GPU、使用与 {fabric} 同类网络的实例相同</translation>
    </message>
    <message>
        <source>one per GPU (no instance in the spec data uses {fabric})</source>
        <translation>每 GPU 一块（规格库中没有实例使用 {fabric}）</translation>
    </message>
    <message>
        <source>given (--nics-per-node)</source>
        <translation>由用户指定（--nics-per-node）</translation>
    </message>
    <message>
        <source>the plan&apos;s ({instance})</source>
        <translation>取方案的（{instance}）</translation>
    </message>
    <message>
        <source>the plan&apos;s (one per GPU)</source>
        <translation>取方案的（每 GPU 一块）</translation>
    </message>
</context>
<context>
    <name>Fields</name>
    <message>
        <source>whole number from {lo} to {hi}</source>
        <translation>{lo} 到 {hi} 之间的整数</translation>
    </message>
    <message>
        <source>; {lo} means {special}</source>
        <translation>；{lo} 表示{special}</translation>
    </message>
    <message>
        <source>{name}: a number greater than {lo}</source>
        <translation>{name}：大于 {lo} 的数</translation>
    </message>
    <message>
        <source>{name}: a number from {lo} to {hi}</source>
        <translation>{name}：{lo} 到 {hi} 之间的数</translation>
    </message>
    <message>
        <source> (or empty)</source>
        <translation>（可留空）</translation>
    </message>
    <message>
        <source>, e.g. 1e12 or 2,500</source>
        <translation>，例如 1e12 或 2,500</translation>
    </message>
    <message>
        <source>µs</source>
        <translation>微秒</translation>
    </message>
    <message>
        <source>ms</source>
        <translation>毫秒</translation>
    </message>
    <message>
        <source>s</source>
        <translation>秒</translation>
    </message>
    <message>
        <source>min</source>
        <translation>分钟</translation>
    </message>
    <message>
        <source>h</source>
        <translation>小时</translation>
    </message>
    <message>
        <source>days</source>
        <translation>天</translation>
    </message>
</context>
<context>
    <name>HelpMenu</name>
    <message>
        <source>&amp;Quick Start</source>
        <translation>快速入门(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Keyboard Shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>Open E&amp;xample</source>
        <translation>打开示例(&amp;X)</translation>
    </message>
    <message>
        <source>&amp;Validation…</source>
        <translation>验证(&amp;V)…</translation>
    </message>
</context>
<context>
    <name>HostPanel</name>
    <message>
        <source>fed</source>
        <translation>供给充足</translation>
    </message>
    <message>
        <source>CPU-bound</source>
        <translation>受 CPU 限制</translation>
    </message>
    <message>
        <source>storage-bound</source>
        <translation>受存储限制</translation>
    </message>
    <message>
        <source>unknown (choose an instance)</source>
        <translation>未知（请选择实例）</translation>
    </message>
    <message>
        <source>{total} resumable ({weights} weights), {files} file(s); {write} per save at {bw:g} GB/s per node = {pct:.2f}% of training; {kept} kept: {disk}</source>
        <translation>可恢复检查点 {total}（权重 {weights}），{files} 个文件；每节点 {bw:g} GB/s 时每次保存 {write} = 训练时间的 {pct:.2f}%；保留 {kept} 个：{disk}</translation>
    </message>
    <message>
        <source>{need} per node (choose an instance to compare)</source>
        <translation>每节点 {need}（选择实例以便比较）</translation>
    </message>
    <message>
        <source>{need} of {ram} per node ({states} offloaded states)</source>
        <translation>每节点 {need} / {ram}（卸载状态 {states}）</translation>
    </message>
    <message>
        <source>DOES NOT FIT the host</source>
        <translation>主机内存放不下</translation>
    </message>
    <message>
        <source>{verdict}: {need} samples/s per node ({read}/s, {cores} cores); {workers} loader workers per GPU</source>
        <translation>{verdict}：每节点 {need} 样本/秒（{read}/s，{cores} 个核）；每 GPU {workers} 个加载进程</translation>
    </message>
    <message>
        <source>Host side</source>
        <translation>主机侧</translation>
    </message>
    <message>
        <source>default</source>
        <translation>默认</translation>
    </message>
    <message>
        <source>Checkpoint</source>
        <translation>检查点</translation>
    </message>
    <message>
        <source>Host RAM</source>
        <translation>主机内存</translation>
    </message>
    <message>
        <source>Input pipeline</source>
        <translation>输入管线</translation>
    </message>
</context>
<context>
    <name>Machines</name>
    <message>
        <source>Search: name, GPU, provider, region</source>
        <translation>搜索：名称、GPU、云厂商、地域</translation>
    </message>
    <message>
        <source>All providers</source>
        <translation>全部云厂商</translation>
    </message>
    <message>
        <source>All GPUs</source>
        <translation>全部 GPU</translation>
    </message>
    <message>
        <source>All regions</source>
        <translation>全部地域</translation>
    </message>
    <message>
        <source>Ticked only</source>
        <translation>仅看已勾选</translation>
    </message>
    <message>
        <source>Untick all</source>
        <translation>全部取消勾选</translation>
    </message>
    <message>
        <source>Tick the plans&apos; machines</source>
        <translation>勾选各方案的机器</translation>
    </message>
    <message>
        <source>Tick the machines of this scenario&apos;s plans</source>
        <translation>勾选本场景各方案所用的机器</translation>
    </message>
    <message>
        <source>{ticked} ticked · {shown} of {total} shown</source>
        <translation>已勾选 {ticked} 个 · 显示 {shown}/{total}</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Workload</source>
        <translation>工作负载</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation>方案</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>Scaling</source>
        <translation>扩展性</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>Serve</source>
        <translation>推理服务</translation>
    </message>
    <message>
        <source>Probe</source>
        <translation>探测</translation>
    </message>
    <message>
        <source>Specs</source>
        <translation>规格库</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Estimate updated</source>
        <translation>估算已更新</translation>
    </message>
    <message>
        <source>⚠ {n} row(s) of your database skipped</source>
        <translation>⚠ 已跳过你数据库中的 {n} 行</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;New</source>
        <translation>新建(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>打开(&amp;O)…</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>Open &amp;Example</source>
        <translation>打开示例(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <source>Save &amp;As…</source>
        <translation>另存为(&amp;A)…</translation>
    </message>
    <message>
        <source>&amp;Export Report…</source>
        <translation>导出报告(&amp;E)…</translation>
    </message>
    <message>
        <source>Export &amp;Table as CSV…</source>
        <translation>将表格导出为 CSV(&amp;T)…</translation>
    </message>
    <message>
        <source>Export &amp;Chart…</source>
        <translation>导出图表(&amp;C)…</translation>
    </message>
    <message>
        <source>Se&amp;ttings…</source>
        <translation>设置(&amp;T)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Meeting Mode</source>
        <translation>会议模式(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About</source>
        <translation>关于(&amp;A)</translation>
    </message>
    <message>
        <source>{name} (example copy)</source>
        <translation>{name}（示例副本）</translation>
    </message>
    <message>
        <source>Untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <source>The scenario has unsaved changes. Save them first?</source>
        <translation>场景有未保存的更改。是否先保存？</translation>
    </message>
    <message>
        <source>Open scenario</source>
        <translation>打开场景</translation>
    </message>
    <message>
        <source>Open example</source>
        <translation>打开示例</translation>
    </message>
    <message>
        <source>Cannot open</source>
        <translation>无法打开</translation>
    </message>
    <message>
        <source>Save scenario</source>
        <translation>保存场景</translation>
    </message>
    <message>
        <source>Cannot save</source>
        <translation>无法保存</translation>
    </message>
    <message>
        <source>Saved {path}</source>
        <translation>已保存 {path}</translation>
    </message>
    <message>
        <source>Cannot add the plan</source>
        <translation>无法添加该方案</translation>
    </message>
    <message>
        <source>Export report</source>
        <translation>导出报告</translation>
    </message>
    <message>
        <source>Writing the report…</source>
        <translation>正在生成报告…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Report written: {path}</source>
        <translation>报告已写入：{path}</translation>
    </message>
    <message>
        <source>Report not written</source>
        <translation>报告未写入</translation>
    </message>
    <message>
        <source>This page has no table</source>
        <translation>此页面没有表格</translation>
    </message>
    <message>
        <source>Export table</source>
        <translation>导出表格</translation>
    </message>
    <message>
        <source>Table written: {path}</source>
        <translation>表格已写入：{path}</translation>
    </message>
    <message>
        <source>This page has no chart</source>
        <translation>此页面没有图表</translation>
    </message>
    <message>
        <source>Export chart</source>
        <translation>导出图表</translation>
    </message>
    <message>
        <source>Chart written: {path}</source>
        <translation>图表已写入：{path}</translation>
    </message>
    <message>
        <source>About</source>
        <translation>关于</translation>
    </message>
    <message>
        <source>GPU Capacity Planner {v}
Sizes GPU clusters and cloud GPU servers: memory, time, cost, scaling; probes local GPUs.</source>
        <translation>GPU 容量规划器 {v}
估算 GPU 集群与云 GPU 服务器的显存、时间、成本与扩展性；探测本机 GPU。</translation>
    </message>
</context>
<context>
    <name>OptionForm</name>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
</context>
<context>
    <name>Options</name>
    <message>
        <source>preset name (gpu-planner models) or a config.json path</source>
        <translation>预设名称（见 gpu-planner models）或 config.json 路径</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>training, or one inference batch (serving under load: gpu-planner serve)</source>
        <translation>训练，或单批推理（负载下的推理服务：gpu-planner serve）</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>GPU name or id (gpu-planner specs gpus)</source>
        <translation>GPU 名称或 ID（见 gpu-planner specs gpus）</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>cloud instance id (gpu-planner specs instances)</source>
        <translation>云实例 ID（见 gpu-planner specs instances）</translation>
    </message>
    <message>
        <source>Instance</source>
        <translation>实例</translation>
    </message>
    <message>
        <source>total GPUs (default tp*pp*cp*ep*dp)</source>
        <translation>GPU 总数（默认 tp*pp*cp*ep*dp）</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>GPUs in one node (default: the instance&apos;s, else 8)</source>
        <translation>每个节点的 GPU 数（默认：取实例配置，否则为 8）</translation>
    </message>
    <message>
        <source>GPUs per node</source>
        <translation>每节点 GPU 数</translation>
    </message>
    <message>
        <source>sequences per GPU per forward/backward pass</source>
        <translation>每个 GPU 每次前向/反向传播处理的序列数</translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>微批大小</translation>
    </message>
    <message>
        <source>tokens per sequence (default: the preset&apos;s context used for training)</source>
        <translation>每条序列的 token 数（默认：预设模型训练时使用的上下文长度）</translation>
    </message>
    <message>
        <source>Sequence length</source>
        <translation>序列长度</translation>
    </message>
    <message>
        <source>sequences per optimizer step across all GPUs (default: micro-batch x dp x ep)</source>
        <translation>所有 GPU 每个优化器步骤的序列数（默认：微批大小 x dp x ep）</translation>
    </message>
    <message>
        <source>Global batch (sequences)</source>
        <translation>全局批大小（序列）</translation>
    </message>
    <message>
        <source>training budget in tokens</source>
        <translation>以 token 计的训练预算</translation>
    </message>
    <message>
        <source>Training tokens</source>
        <translation>训练 token 数</translation>
    </message>
    <message>
        <source>precision recipe (default: bf16 mixed precision the GPU supports, by framework)</source>
        <translation>精度方案（默认：按框架选择 GPU 支持的 bf16 混合精度）</translation>
    </message>
    <message>
        <source>Precision recipe</source>
        <translation>精度方案</translation>
    </message>
    <message>
        <source>optimizer (its states per parameter)</source>
        <translation>优化器（决定每个参数的状态量）</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>PyTorch AdamW implementation (--framework pytorch): fused (Hugging Face Trainer&apos;s default on PyTorch 2.8+, torchtitan), foreach (torch.optim&apos;s default) or forloop</source>
        <translation>PyTorch AdamW 的实现（--framework pytorch）：fused（PyTorch 2.8+ 上 Hugging Face Trainer 与 torchtitan 的默认）、foreach（torch.optim 的默认）或 forloop</translation>
    </message>
    <message>
        <source>Optimizer implementation</source>
        <translation>优化器实现</translation>
    </message>
    <message>
        <source>what is trained: every weight (full), LoRA adapters on a frozen base (lora, PEFT), or LoRA on a 4-bit NF4 base (qlora, bitsandbytes)</source>
        <translation>训练哪些参数：全部权重（full）、冻结基座上的 LoRA 适配器（lora，PEFT），或 4 位 NF4 基座上的 LoRA（qlora，bitsandbytes）</translation>
    </message>
    <message>
        <source>Fine-tuning</source>
        <translation>微调</translation>
    </message>
    <message>
        <source>LoRA rank r (default 8, PEFT&apos;s)</source>
        <translation>LoRA 秩 r（默认 8，与 PEFT 一致）</translation>
    </message>
    <message>
        <source>LoRA rank</source>
        <translation>LoRA 秩</translation>
    </message>
    <message>
        <source>modules LoRA adapts, as PEFT&apos;s target_modules: names separated by commas (q_proj,v_proj) or all-linear (default: PEFT&apos;s for the model)</source>
        <translation>LoRA 适配的模块，即 PEFT 的 target_modules：用逗号分隔的模块名（q_proj,v_proj）或 all-linear（默认：PEFT 对该模型的默认值）</translation>
    </message>
    <message>
        <source>LoRA target modules</source>
        <translation>LoRA 目标模块</translation>
    </message>
    <message>
        <source>LoRA adapter precision (default fp32: PEFT keeps adapters in fp32, autocast_adapter_dtype=True)</source>
        <translation>LoRA 适配器精度（默认 fp32：PEFT 以 fp32 保存适配器，autocast_adapter_dtype=True）</translation>
    </message>
    <message>
        <source>LoRA adapter dtype</source>
        <translation>LoRA 适配器数据类型</translation>
    </message>
    <message>
        <source>LoRA dropout probability (default 0, PEFT&apos;s)</source>
        <translation>LoRA dropout 概率（默认 0，与 PEFT 一致）</translation>
    </message>
    <message>
        <source>LoRA dropout</source>
        <translation>LoRA dropout</translation>
    </message>
    <message>
        <source>QLoRA with peft.prepare_model_for_kbit_training: fp32 embeddings, norms and output layer, gradient checkpointing on</source>
        <translation>QLoRA 使用 peft.prepare_model_for_kbit_training：嵌入层、归一化层和输出层为 fp32，并开启梯度检查点</translation>
    </message>
    <message>
        <source>prepare_model_for_kbit_training</source>
        <translation>prepare_model_for_kbit_training</translation>
    </message>
    <message>
        <source>attention kernel (default: flash for megatron, sdpa otherwise)</source>
        <translation>注意力内核（默认：megatron 用 flash，其余用 sdpa）</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>注意力实现</translation>
    </message>
    <message>
        <source>activation recomputation</source>
        <translation>激活重计算</translation>
    </message>
    <message>
        <source>Activation recomputation</source>
        <translation>激活重计算</translation>
    </message>
    <message>
        <source>tensor-parallel degree</source>
        <translation>张量并行度</translation>
    </message>
    <message>
        <source>Tensor parallel</source>
        <translation>张量并行</translation>
    </message>
    <message>
        <source>pipeline-parallel degree</source>
        <translation>流水线并行度</translation>
    </message>
    <message>
        <source>Pipeline parallel</source>
        <translation>流水线并行</translation>
    </message>
    <message>
        <source>data-parallel degree (default: GPUs / (tp x pp x cp x ep))</source>
        <translation>数据并行度（默认：GPU 数 / (tp x pp x cp x ep)）</translation>
    </message>
    <message>
        <source>Data parallel</source>
        <translation>数据并行</translation>
    </message>
    <message>
        <source>context-parallel degree</source>
        <translation>上下文并行度</translation>
    </message>
    <message>
        <source>Context parallel</source>
        <translation>上下文并行</translation>
    </message>
    <message>
        <source>expert-parallel degree (MoE models)</source>
        <translation>专家并行度（MoE 模型）</translation>
    </message>
    <message>
        <source>Expert parallel</source>
        <translation>专家并行</translation>
    </message>
    <message>
        <source>virtual stages per rank (interleaved)</source>
        <translation>每个进程的虚拟流水线阶段数（交错式调度）</translation>
    </message>
    <message>
        <source>Virtual stages</source>
        <translation>虚拟流水线阶段数</translation>
    </message>
    <message>
        <source>ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 also parameters</source>
        <translation>ZeRO 阶段：1 切分优化器状态，2 同时切分梯度，3 再切分参数</translation>
    </message>
    <message>
        <source>ZeRO stage</source>
        <translation>ZeRO 阶段</translation>
    </message>
    <message>
        <source>hybrid sharding (FSDP2 HSDP): ZeRO shards over groups of this many data-parallel ranks (all of them when there are fewer) and the groups hold replicas (default: all data-parallel ranks)</source>
        <translation>混合分片（FSDP2 HSDP）：ZeRO 在每组这么多个数据并行 rank 内分片（rank 更少时即全部 rank），各组之间互为副本（默认：全部数据并行 rank）</translation>
    </message>
    <message>
        <source>Shard group (HSDP)</source>
        <translation>分片组大小（HSDP）</translation>
    </message>
    <message>
        <source>FSDP: keep each layer&apos;s gathered parameters from its forward to its backward (fully_shard reshard_after_forward=False, FSDP1 SHARD_GRAD_OP; needs --zero 3)</source>
        <translation>FSDP：每层聚合后的参数从前向保留到反向（fully_shard reshard_after_forward=False，即 FSDP1 的 SHARD_GRAD_OP；需要 --zero 3）</translation>
    </message>
    <message>
        <source>Keep gathered parameters (no reshard after forward)</source>
        <translation>保留聚合参数（前向后不重新分片）</translation>
    </message>
    <message>
        <source>Megatron sequence parallelism (needs --tp &gt; 1)</source>
        <translation>Megatron 序列并行（需要 --tp &gt; 1）</translation>
    </message>
    <message>
        <source>Sequence parallel</source>
        <translation>序列并行</translation>
    </message>
    <message>
        <source>pipeline schedule</source>
        <translation>流水线调度</translation>
    </message>
    <message>
        <source>Pipeline schedule</source>
        <translation>流水线调度</translation>
    </message>
    <message>
        <source>offload states to the CPU (ZeRO-Offload)</source>
        <translation>将状态卸载到 CPU（ZeRO-Offload）</translation>
    </message>
    <message>
        <source>Offload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>training framework (its buffers and overheads)</source>
        <translation>训练框架（决定其缓冲区与开销）</translation>
    </message>
    <message>
        <source>Framework</source>
        <translation>框架</translation>
    </message>
    <message>
        <source>inter-node network id (gpu-planner specs fabrics; default: the instance&apos;s, else InfiniBand NDR)</source>
        <translation>节点间网络 ID（见 gpu-planner specs fabrics；默认：取实例配置，否则为 InfiniBand NDR）</translation>
    </message>
    <message>
        <source>Network</source>
        <translation>网络</translation>
    </message>
    <message>
        <source>network adapters per node (default: the instance&apos;s, else one per GPU)</source>
        <translation>每节点网卡数（默认：取实例配置，否则每 GPU 一块）</translation>
    </message>
    <message>
        <source>NICs per node</source>
        <translation>每节点网卡数</translation>
    </message>
    <message>
        <source>override the efficiency model with this MFU</source>
        <translation>用此 MFU 代替效率模型</translation>
    </message>
    <message>
        <source>MFU</source>
        <translation>算力利用率 (MFU)</translation>
    </message>
    <message>
        <source>override: achieved TFLOP/s per GPU</source>
        <translation>覆盖：每 GPU 实际达到的 TFLOP/s</translation>
    </message>
    <message>
        <source>Achieved TFLOP/s</source>
        <translation>实际 TFLOP/s</translation>
    </message>
    <message>
        <source>e.g. reserved_1yr=0.8,on_demand=0.2</source>
        <translation>例如 reserved_1yr=0.8,on_demand=0.2</translation>
    </message>
    <message>
        <source>Price mix</source>
        <translation>价格组合</translation>
    </message>
    <message>
        <source>price basis of cost.usd (default on_demand, else the first known price)</source>
        <translation>cost.usd 的计价方式（默认按需价格，否则取第一个已知价格）</translation>
    </message>
    <message>
        <source>Price basis</source>
        <translation>计价方式</translation>
    </message>
    <message>
        <source>exchange rate for CNY prices (default 7.10)</source>
        <translation>人民币价格的汇率（默认 7.10）</translation>
    </message>
    <message>
        <source>CNY per USD</source>
        <translation>人民币兑美元汇率</translation>
    </message>
    <message>
        <source>name of a probe calibration profile (gpu-planner probe --save NAME)</source>
        <translation>探测校准配置的名称（gpu-planner probe --save NAME）</translation>
    </message>
    <message>
        <source>Calibration</source>
        <translation>校准</translation>
    </message>
    <message>
        <source>minutes between checkpoint saves (default 60)</source>
        <translation>两次保存检查点之间的分钟数（默认 60）</translation>
    </message>
    <message>
        <source>Checkpoint interval</source>
        <translation>检查点间隔</translation>
    </message>
    <message>
        <source>checkpoints kept on disk (default 3)</source>
        <translation>磁盘上保留的检查点个数（默认 3）</translation>
    </message>
    <message>
        <source>Checkpoints kept</source>
        <translation>保留的检查点</translation>
    </message>
    <message>
        <source>checkpoint write bandwidth of one node in GB/s (default: the host probe&apos;s, else 1)</source>
        <translation>单节点检查点写入带宽，GB/s（默认：主机探测的结果，否则为 1）</translation>
    </message>
    <message>
        <source>Storage write bandwidth</source>
        <translation>存储写入带宽</translation>
    </message>
    <message>
        <source>a host probe result (JSON file of gpu-planner host-probe) that calibrates storage and decode rates</source>
        <translation>主机探测结果（gpu-planner host-probe 输出的 JSON 文件），用于校准存储与解码速率</translation>
    </message>
    <message>
        <source>Host probe</source>
        <translation>主机探测</translation>
    </message>
    <message>
        <source>inference: concurrent sequences</source>
        <translation>推理：并发序列数</translation>
    </message>
    <message>
        <source>Concurrent sequences</source>
        <translation>并发序列数</translation>
    </message>
    <message>
        <source>inference: prompt tokens per sequence</source>
        <translation>推理：每条序列的提示词 token 数</translation>
    </message>
    <message>
        <source>Prompt length (tokens)</source>
        <translation>提示词长度（Token 数）</translation>
    </message>
    <message>
        <source>inference: generated tokens per sequence</source>
        <translation>推理：每条序列生成的 token 数</translation>
    </message>
    <message>
        <source>New tokens per request</source>
        <translation>每个请求生成的 token 数</translation>
    </message>
    <message>
        <source>inference: how the batch is run: Hugging Face model.generate() (transformers 5.x keeps the prefill&apos;s logits for the last token only) or a hand-written model(input_ids) loop (logits for every prompt token)</source>
        <translation>推理：批次的运行方式：Hugging Face model.generate()（transformers 5.x 在预填充阶段只保留最后一个 token 的 logits）或手写的 model(input_ids) 循环（每个提示词 token 都有 logits）</translation>
    </message>
    <message>
        <source>Inference API</source>
        <translation>推理接口</translation>
    </message>
    <message>
        <source>inference: weight precision</source>
        <translation>推理：权重精度</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>inference: KV-cache precision</source>
        <translation>推理：KV 缓存精度</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>GPU name or id; a comma-separated list with --ttft-ms/--tpot-ms (search)</source>
        <translation>GPU 名称或 ID；配合 --ttft-ms/--tpot-ms 时可用逗号分隔多个（搜索）</translation>
    </message>
    <message>
        <source>cloud instance id; a comma-separated list with --ttft-ms/--tpot-ms (search)</source>
        <translation>云实例 ID；配合 --ttft-ms/--tpot-ms 时可用逗号分隔多个（搜索）</translation>
    </message>
    <message>
        <source>tensor-parallel degree of one replica</source>
        <translation>单个副本的张量并行度</translation>
    </message>
    <message>
        <source>pipeline-parallel degree of one replica</source>
        <translation>单个副本的流水线并行度</translation>
    </message>
    <message>
        <source>expert-parallel degree (MoE models; divides tp x attention-dp)</source>
        <translation>专家并行度（MoE 模型；需整除 tp x attention-dp）</translation>
    </message>
    <message>
        <source>data-parallel attention ranks in one replica</source>
        <translation>单个副本内的注意力数据并行进程数</translation>
    </message>
    <message>
        <source>Attention data parallel</source>
        <translation>注意力数据并行</translation>
    </message>
    <message>
        <source>independent replicas behind a load balancer</source>
        <translation>负载均衡器后的独立副本数</translation>
    </message>
    <message>
        <source>Replicas</source>
        <translation>副本数</translation>
    </message>
    <message>
        <source>input (prompt) tokens per request</source>
        <translation>每个请求的输入（提示词）token 数</translation>
    </message>
    <message>
        <source>Input tokens</source>
        <translation>输入 token 数</translation>
    </message>
    <message>
        <source>output tokens per request</source>
        <translation>每个请求的输出 token 数</translation>
    </message>
    <message>
        <source>Output tokens</source>
        <translation>输出 token 数</translation>
    </message>
    <message>
        <source>requests in the system at once (closed loop)</source>
        <translation>系统中同时存在的请求数（闭环）</translation>
    </message>
    <message>
        <source>Concurrency</source>
        <translation>并发数</translation>
    </message>
    <message>
        <source>arriving requests per second (open loop)</source>
        <translation>每秒到达的请求数（开环）</translation>
    </message>
    <message>
        <source>Request rate</source>
        <translation>请求速率</translation>
    </message>
    <message>
        <source>weight precision</source>
        <translation>权重精度</translation>
    </message>
    <message>
        <source>KV-cache precision</source>
        <translation>KV 缓存精度</translation>
    </message>
    <message>
        <source>serving engine (its per-step overhead)</source>
        <translation>推理服务引擎（决定其每步开销）</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>share of GPU memory the engine may use (vLLM&apos;s default 0.9); with trtllm, the share of the memory the model leaves free that the KV cache takes (free_gpu_memory_fraction)</source>
        <translation>引擎可使用的 GPU 显存比例（vLLM 默认 0.9）；使用 trtllm 时，为模型加载后剩余显存中分给 KV 缓存的比例（free_gpu_memory_fraction）</translation>
    </message>
    <message>
        <source>GPU memory utilization</source>
        <translation>GPU 显存利用率</translation>
    </message>
    <message>
        <source>most requests running at once per engine (default vLLM&apos;s: 1024 on GPUs of 70 GiB or more except A100, else 256)</source>
        <translation>每个引擎同时运行的最大请求数（默认取 vLLM 的值：70 GiB 及以上的 GPU（A100 除外）为 1024，否则为 256）</translation>
    </message>
    <message>
        <source>Max running requests</source>
        <translation>最大运行请求数</translation>
    </message>
    <message>
        <source>token budget of one engine step, chunked prefill (default vLLM&apos;s: 8192 on GPUs of 70 GiB or more except A100, else 2048)</source>
        <translation>引擎单步的 token 预算（分块预填充；默认取 vLLM 的值：70 GiB 及以上的 GPU（A100 除外）为 8192，否则为 2048）</translation>
    </message>
    <message>
        <source>Max tokens per step</source>
        <translation>每步最大 token 数</translation>
    </message>
    <message>
        <source>requests a closed-loop benchmark at --concurrency sends in all, its clients starting together (default: concurrency x 10)</source>
        <translation>在 --concurrency 下闭环基准测试共发送的请求数，其客户端同时开始（默认：并发数 × 10）</translation>
    </message>
    <message>
        <source>Benchmark requests</source>
        <translation>基准测试请求数</translation>
    </message>
    <message>
        <source>search: time-to-first-token target</source>
        <translation>搜索：首 token 延迟目标</translation>
    </message>
    <message>
        <source>TTFT target</source>
        <translation>TTFT 目标</translation>
    </message>
    <message>
        <source>search: time-per-output-token target</source>
        <translation>搜索：每输出 token 耗时目标</translation>
    </message>
    <message>
        <source>TPOT target</source>
        <translation>TPOT 目标</translation>
    </message>
    <message>
        <source>search: also try quantized weights (fp8, int4; fp4 where the GPU has fp4 tensor cores); without it, only the model&apos;s own 16-bit weights</source>
        <translation>搜索：同时尝试量化权重（fp8、int4；GPU 有 fp4 张量核心时也试 fp4）；不选时只用模型自带的 16 位权重</translation>
    </message>
    <message>
        <source>Quantized weights</source>
        <translation>量化权重</translation>
    </message>
    <message>
        <source>search: deployments to list</source>
        <translation>搜索：列出的部署方案数</translation>
    </message>
    <message>
        <source>Top</source>
        <translation>列出数量</translation>
    </message>
    <message>
        <source>largest GPU count to consider</source>
        <translation>考虑的最大 GPU 数</translation>
    </message>
    <message>
        <source>Max GPUs</source>
        <translation>最大 GPU 数</translation>
    </message>
    <message>
        <source>only plans that finish within this many days</source>
        <translation>只保留在此天数内完成的方案</translation>
    </message>
    <message>
        <source>Deadline</source>
        <translation>截止期限</translation>
    </message>
    <message>
        <source>only plans that cost at most this much (USD at the price basis)</source>
        <translation>只保留成本不超过此金额的方案（按计价方式的美元）</translation>
    </message>
    <message>
        <source>Budget</source>
        <translation>预算</translation>
    </message>
    <message>
        <source>rank by time to train or by cost</source>
        <translation>按训练时间或成本排序</translation>
    </message>
    <message>
        <source>Objective</source>
        <translation>优化目标</translation>
    </message>
    <message>
        <source>how many plans to print</source>
        <translation>输出的方案数</translation>
    </message>
    <message>
        <source>memory margin: a plan fits only with this % of the GPU free</source>
        <translation>显存余量：方案须留出 GPU 显存的此百分比才算可容纳</translation>
    </message>
    <message>
        <source>Memory margin</source>
        <translation>显存余量</translation>
    </message>
    <message>
        <source>one or more GPUs, comma-separated</source>
        <translation>一个或多个 GPU，用逗号分隔</translation>
    </message>
    <message>
        <source>one or more instances, comma-separated</source>
        <translation>一个或多个实例，用逗号分隔</translation>
    </message>
    <message>
        <source>price basis for every plan&apos;s cost (as Plan&apos;s headline cost)</source>
        <translation>每个方案成本的计价方式（同方案页的主成本）</translation>
    </message>
    <message>
        <source>node counts, comma-separated</source>
        <translation>节点数，用逗号分隔</translation>
    </message>
    <message>
        <source>Node counts</source>
        <translation>节点数</translation>
    </message>
    <message>
        <source>fabric ids to compare, comma-separated (default: the plan&apos;s own)</source>
        <translation>要对比的互连网络 ID，用逗号分隔（默认：方案自身的网络）</translation>
    </message>
    <message>
        <source>Networks</source>
        <translation>网络</translation>
    </message>
    <message>
        <source>weak scaling: global batch grows with the nodes</source>
        <translation>弱扩展：全局批大小随节点数增长</translation>
    </message>
    <message>
        <source>Weak scaling</source>
        <translation>弱扩展</translation>
    </message>
    <message>
        <source>training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>inference</source>
        <translation>推理</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>selective</source>
        <translation>选择性</translation>
    </message>
    <message>
        <source>full</source>
        <translation>完整</translation>
    </message>
    <message>
        <source>optimizer states</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>full fine-tuning</source>
        <translation>全参数微调</translation>
    </message>
    <message>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <source>QLoRA</source>
        <translation>QLoRA</translation>
    </message>
    <message>
        <source>mixed-bf16 (fp32 master weights)</source>
        <translation>混合精度 bf16（fp32 主权重）</translation>
    </message>
    <message>
        <source>amp-bf16 (fp32 model, bf16 autocast)</source>
        <translation>amp-bf16（fp32 模型，bf16 自动混合精度）</translation>
    </message>
    <message>
        <source>amp-fp16 (fp32 model, fp16 autocast)</source>
        <translation>amp-fp16（fp32 模型，fp16 自动混合精度）</translation>
    </message>
    <message>
        <source>bf16-autocast (bf16 model, autocast)</source>
        <translation>bf16-autocast（bf16 模型，自动混合精度）</translation>
    </message>
    <message>
        <source>fused</source>
        <translation>融合内核（fused）</translation>
    </message>
    <message>
        <source>foreach</source>
        <translation>多张量（foreach）</translation>
    </message>
    <message>
        <source>for-loop</source>
        <translation>逐参数循环（for-loop）</translation>
    </message>
    <message>
        <source>model.generate()</source>
        <translation>model.generate()</translation>
    </message>
    <message>
        <source>hand-written forward loop</source>
        <translation>手写前向循环</translation>
    </message>
    <message>
        <source>interleaved 1F1B</source>
        <translation>交错式 1F1B</translation>
    </message>
    <message>
        <source>fastest</source>
        <translation>最快</translation>
    </message>
    <message>
        <source>cheapest</source>
        <translation>最便宜</translation>
    </message>
</context>
<context>
    <name>PlanPage</name>
    <message>
        <source>Duplicate</source>
        <translation>创建副本</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Hardware and layout</source>
        <translation>硬件与并行布局</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>default</source>
        <translation>默认</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>GPU or instance</source>
        <translation>GPU 或实例</translation>
    </message>
    <message>
        <source>GPU memory here is the GPU&apos;s total as the driver reports it (NVML, nvidia-smi), in GB of 10⁹ bytes: {factor} × the datasheet&apos;s size, which is in GiB (a datasheet&apos;s &quot;80 GB&quot; is {example:.2f} GB here; the Specs page shows both). A plan&apos;s memory includes the CUDA context.</source>
        <translation>这里的 GPU 显存是驱动报告的总量（NVML、nvidia-smi），以 GB（10⁹ 字节）为单位：规格表容量（单位为 GiB）× {factor}（规格表上的“80 GB”在这里是 {example:.2f} GB；“规格”页两者都显示）。方案的显存包含 CUDA 上下文。</translation>
    </message>
    <message>
        <source>Memory per GPU</source>
        <translation>每 GPU 显存</translation>
    </message>
    <message>
        <source>This plan&apos;s own settings (the Workload page&apos;s apply to the other plans): {settings}</source>
        <translation>此方案的自有设置（工作负载页的设置适用于其他方案）：{settings}</translation>
    </message>
    <message>
        <source>Cost of the run</source>
        <translation>训练总成本</translation>
    </message>
    <message>
        <source>FITS: {used} of {cap} per GPU, {head} free ({pct:.0f}%)</source>
        <translation>可容纳：每 GPU 使用 {used} / {cap}，剩余 {head}（{pct:.0f}%）</translation>
    </message>
    <message>
        <source>TIGHT: fits with only {head} free ({pct:.1f}%), below your {margin:g}% margin; {used} of {cap} per GPU</source>
        <translation>余量不足：虽可容纳，但仅剩 {head}（{pct:.1f}%），低于您设定的 {margin:g}% 余量；每 GPU 使用 {used} / {cap}</translation>
    </message>
    <message>
        <source>{dp}  ({gpus} GPUs = tp {tp} × pp {pp} × cp {cp} × ep {ep} × dp {dp})</source>
        <translation>{dp}（{gpus} 个 GPU = tp {tp} × pp {pp} × cp {cp} × ep {ep} × dp {dp}）</translation>
    </message>
    <message>
        <source>(if it fit)</source>
        <translation>（假如能容纳）</translation>
    </message>
    <message>
        <source>host-bound (Python dispatch)</source>
        <translation>主机受限（Python 调度）</translation>
    </message>
    <message>
        <source>vLLM: {t}</source>
        <translation>vLLM：{t}</translation>
    </message>
    <message>
        <source>${v:,.3f} {kind}</source>
        <translation>${v:,.3f}（{kind}）</translation>
    </message>
    <message>
        <source>your rate</source>
        <translation>您设定的汇率</translation>
    </message>
    <message>
        <source>default rate</source>
        <translation>默认汇率</translation>
    </message>
    <message>
        <source>¥ CNY price of {date}</source>
        <translation>¥ 人民币价格（{date}）</translation>
    </message>
    <message>
        <source>$ USD price of {date}</source>
        <translation>$ 美元价格（{date}）</translation>
    </message>
    <message>
        <source>{days} days old: may be stale</source>
        <translation>已有 {days} 天，可能已过时</translation>
    </message>
    <message>
        <source>the provider publishes no price for this instance</source>
        <translation>云厂商未公布该实例的价格</translation>
    </message>
    <message>
        <source>no on-demand price</source>
        <translation>无按需价格</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>单步耗时</translation>
    </message>
    <message>
        <source>Largest batch that fits</source>
        <translation>可容纳的最大批量</translation>
    </message>
    <message>
        <source>Time to first token (prefill)</source>
        <translation>首 token 延迟（预填充）</translation>
    </message>
    <message>
        <source>Generated tokens/s (all sequences)</source>
        <translation>生成吞吐（所有序列，token/秒）</translation>
    </message>
    <message>
        <source>Time per output token (decode)</source>
        <translation>每输出 token 耗时（解码）</translation>
    </message>
    <message>
        <source>Tokens/s per sequence</source>
        <translation>每序列 token/秒</translation>
    </message>
    <message>
        <source>Request latency (prefill + decode)</source>
        <translation>请求延迟（预填充 + 解码）</translation>
    </message>
    <message>
        <source>Cost per million generated tokens</source>
        <translation>每百万生成 token 成本</translation>
    </message>
    <message>
        <source>Largest micro-batch that fits</source>
        <translation>可容纳的最大微批量</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>token/秒</translation>
    </message>
    <message>
        <source>MFU</source>
        <translation>算力利用率 (MFU)</translation>
    </message>
    <message>
        <source>Time to train</source>
        <translation>训练时间</translation>
    </message>
    <message>
        <source>GPU-hours</source>
        <translation>GPU 小时</translation>
    </message>
    <message>
        <source>Assumptions</source>
        <translation>假设</translation>
    </message>
    <message>
        <source>Plan {n}</source>
        <translation>方案 {n}</translation>
    </message>
    <message>
        <source> (copy)</source>
        <translation> (副本)</translation>
    </message>
    <message>
        <source>GPU or instance: choose one from the list</source>
        <translation>GPU 或实例：请从列表中选择一项</translation>
    </message>
    <message>
        <source>No result: fix the input marked below</source>
        <translation>无结果：请修正下方标出的输入</translation>
    </message>
    <message>
        <source>DOES NOT FIT: needs {used} per GPU, the GPU has {cap}</source>
        <translation>无法容纳：每 GPU 需要 {used}，而 GPU 只有 {cap}</translation>
    </message>
    <message>
        <source>this plan</source>
        <translation>此方案</translation>
    </message>
    <message>
        <source>per GPU</source>
        <translation>每 GPU</translation>
    </message>
    <message>
        <source>Advice: </source>
        <translation>建议：</translation>
    </message>
    <message>
        <source>set Tokens on the Workload page</source>
        <translation>请在“工作负载”页设置 Token 数</translation>
    </message>
    <message>
        <source>{b:,} sequences</source>
        <translation>{b:,} 条序列</translation>
    </message>
    <message>
        <source>(of {p:,} + {g:,} tokens)</source>
        <translation>（每条 {p:,} + {g:,} token）</translation>
    </message>
    <message>
        <source>{v:,.0f} tokens/s</source>
        <translation>{v:,.0f} token/秒</translation>
    </message>
    <message>
        <source>{v:,.0f} per GPU</source>
        <translation>每 GPU {v:,.0f}</translation>
    </message>
    <message>
        <source>memory-bound</source>
        <translation>访存受限</translation>
    </message>
    <message>
        <source>compute-bound</source>
        <translation>计算受限</translation>
    </message>
    <message>
        <source>{v:,.1f} tokens/s</source>
        <translation>{v:,.1f} token/秒</translation>
    </message>
    <message>
        <source>at {rate} CNY/USD ({how})</source>
        <translation>按 {rate} 人民币/美元换算（{how}）</translation>
    </message>
    <message>
        <source>no price (choose a cloud instance)</source>
        <translation>无价格（请选择云实例）</translation>
    </message>
    <message>
        <source>(${h:,.2f} per hour)</source>
        <translation>（每小时 ${h:,.2f}）</translation>
    </message>
    <message>
        <source>Latency of one request</source>
        <translation>单个请求的延迟</translation>
    </message>
</context>
<context>
    <name>ProbePage</name>
    <message>
        <source>Devices</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>SM clock</source>
        <translation>SM 频率</translation>
    </message>
    <message>
        <source>Power</source>
        <translation>功耗</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Throttling</source>
        <translation>降频</translation>
    </message>
    <message>
        <source>Live telemetry</source>
        <translation>实时遥测</translation>
    </message>
    <message>
        <source>Utilization</source>
        <translation>利用率</translation>
    </message>
    <message>
        <source>Memory used</source>
        <translation>已用显存</translation>
    </message>
    <message>
        <source>Microbenchmarks</source>
        <translation>微基准测试</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>CPU (numpy)</source>
        <translation>CPU (numpy)</translation>
    </message>
    <message>
        <source>quick</source>
        <translation>快速</translation>
    </message>
    <message>
        <source>Run benchmarks</source>
        <translation>运行基准测试</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <source>Measurement</source>
        <translation>测量项</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>规模</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>Unit</source>
        <translation>单位</translation>
    </message>
    <message>
        <source>Calibration profiles</source>
        <translation>校准配置</translation>
    </message>
    <message>
        <source>profile name</source>
        <translation>配置名称</translation>
    </message>
    <message>
        <source>Save results as profile</source>
        <translation>将结果保存为校准配置</translation>
    </message>
    <message>
        <source>Use selected profile in this scenario</source>
        <translation>在此场景中使用所选校准配置</translation>
    </message>
    <message>
        <source>Validate: train the workload model for a few steps</source>
        <translation>验证：用工作负载中的模型训练几步</translation>
    </message>
    <message>
        <source>Cluster probe (torch.distributed: NCCL on GPUs)</source>
        <translation>集群探测（torch.distributed：GPU 上使用 NCCL）</translation>
    </message>
    <message>
        <source>Slurm script</source>
        <translation>Slurm 脚本</translation>
    </message>
    <message>
        <source>Write launch command</source>
        <translation>生成启动命令</translation>
    </message>
    <message>
        <source>Import result file…</source>
        <translation>导入结果文件…</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点数</translation>
    </message>
    <message>
        <source>GPUs per node</source>
        <translation>每节点 GPU 数</translation>
    </message>
    <message>
        <source>{n} ranks on {nodes} node(s): best all-reduce bus bandwidth {bw:,.0f} GB/s</source>
        <translation>{nodes} 个节点上 {n} 个进程：all-reduce 最佳总线带宽 {bw:,.0f} GB/s</translation>
    </message>
    <message>
        <source>saved in profile {name}</source>
        <translation>已保存到校准配置 {name}</translation>
    </message>
    <message>
        <source>Import a cluster probe result</source>
        <translation>导入集群探测结果</translation>
    </message>
    <message>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <source>simulated devices (test)</source>
        <translation>模拟设备（测试）</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>{n} GPU(s) via NVML</source>
        <translation>通过 NVML 检测到 {n} 个 GPU</translation>
    </message>
    <message>
        <source>eager dispatch (host)</source>
        <translation>eager 调度（主机）</translation>
    </message>
    <message>
        <source>us per op</source>
        <translation>us / 算子</translation>
    </message>
    <message>
        <source>{dev} with {backend}: best GEMM {t:,.1f} {unit}</source>
        <translation>{dev}（{backend}）：最佳 GEMM {t:,.1f} {unit}</translation>
    </message>
    <message>
        <source>Validation: peak memory {p}, step time {s} against the estimate without a profile, {c} with this probe&apos;s profile</source>
        <translation>验证：峰值显存 {p}，单步时间与不用校准配置的估算相差 {s}，与使用本次探测校准配置的估算相差 {c}</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>运行中…</translation>
    </message>
    <message>
        <source>No GPU telemetry: NVML found no GPU</source>
        <translation>无 GPU 遥测：NVML 未发现 GPU</translation>
    </message>
    <message>
        <source>No GPU telemetry: NVML is unavailable (see Devices)</source>
        <translation>无 GPU 遥测：NVML 不可用（见“设备”）</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Probe failed: {err}</source>
        <translation>探测失败：{err}</translation>
    </message>
    <message>
        <source>Profiles calibrate GPU estimates: run on a GPU from the spec database</source>
        <translation>校准配置用于修正 GPU 估算：请在规格库中已有的 GPU 上运行</translation>
    </message>
    <message>
        <source>a CPU run ({backend} backend) has no datasheet to compare with</source>
        <translation>CPU 运行（{backend} 后端）没有可对比的规格表</translation>
    </message>
    <message>
        <source>{device} is not in the spec database</source>
        <translation>{device} 不在规格库中</translation>
    </message>
    <message>
        <source>the datasheet has no {dtype} figure</source>
        <translation>规格表没有 {dtype} 数据</translation>
    </message>
    <message>
        <source>no datasheet figure for this measurement</source>
        <translation>规格表没有此项测量的数据</translation>
    </message>
    <message>
        <source>Measured against the datasheet: normal</source>
        <translation>已与规格表对比：正常</translation>
    </message>
    <message>
        <source>{what} {rate}: not compared — {reason}</source>
        <translation>{what} {rate}：未对比——{reason}</translation>
    </message>
    <message>
        <source>{what} {bw:,.1f} GB/s: not compared — {reason}</source>
        <translation>{what} {bw:,.1f} GB/s：未对比——{reason}</translation>
    </message>
    <message>
        <source>user database unavailable: {err}</source>
        <translation>用户数据库不可用：{err}</translation>
    </message>
    <message>
        <source>Calibrate this scenario&apos;s estimates with profile {name}</source>
        <translation>用校准配置 {name} 校准此场景的估算</translation>
    </message>
    <message>
        <source>Select a profile in the list first</source>
        <translation>请先在列表中选择一个校准配置</translation>
    </message>
    <message>
        <source>No calibration profiles yet: run the benchmarks on a GPU and save the results as a profile</source>
        <translation>尚无校准配置：请在 GPU 上运行基准测试并将结果保存为校准配置</translation>
    </message>
    <message>
        <source>Profile name: type a name first</source>
        <translation>配置名称：请先输入名称</translation>
    </message>
    <message>
        <source>Saved profile {name}</source>
        <translation>已保存校准配置 {name}</translation>
    </message>
    <message>
        <source>Select a profile first</source>
        <translation>请先选择一个校准配置</translation>
    </message>
    <message>
        <source>Validation runs preset models; choose a preset on the Workload page</source>
        <translation>验证只支持预设模型；请在“工作负载”页选择一个预设</translation>
    </message>
</context>
<context>
    <name>QuickStartDialog</name>
    <message>
        <source>Quick start</source>
        <translation>快速入门</translation>
    </message>
    <message>
        <source>&lt;b&gt;{page}&lt;/b&gt;: choose the model and the job: training (tokens, sequence length, batch, precision, full fine-tuning, LoRA or QLoRA) or inference.</source>
        <translation>&lt;b&gt;{page}&lt;/b&gt;：选择模型和任务：训练（token 数、序列长度、批大小、精度、全参数微调、LoRA 或 QLoRA）或推理。</translation>
    </message>
    <message>
        <source>&lt;b&gt;{page}&lt;/b&gt;: pick a GPU or a cloud instance and the parallel layout; read the memory per GPU (does it fit?), the step time, the time to train and the cost. Every cost names its price basis (on-demand, reserved or spot).</source>
        <translation>&lt;b&gt;{page}&lt;/b&gt;：选择 GPU 或云实例以及并行布局；查看每 GPU 显存（是否放得下）、单步时间、训练时长和成本。每项成本都注明其价格类型（按需、预留或竞价）。</translation>
    </message>
    <message>
        <source>&lt;b&gt;{search}&lt;/b&gt; and &lt;b&gt;{serve}&lt;/b&gt;: let the planner rank layouts and machines under a GPU limit, a deadline or a budget, or find the serving deployments that meet your TTFT and TPOT targets. &quot;Open in Plan&quot; adds a result as a plan of its own.</source>
        <translation>&lt;b&gt;{search}&lt;/b&gt;和&lt;b&gt;{serve}&lt;/b&gt;：在 GPU 数量上限、期限或预算之内让规划器为并行布局和机器排序，或找出满足 TTFT 和 TPOT 目标的推理服务部署。“在方案页中打开”把一个结果添加为独立的方案。</translation>
    </message>
    <message>
        <source>&lt;b&gt;{compare}&lt;/b&gt; and &lt;b&gt;{scaling}&lt;/b&gt;: put the plans side by side at one price basis, and see how throughput and efficiency change with the number of nodes.</source>
        <translation>&lt;b&gt;{compare}&lt;/b&gt;和&lt;b&gt;{scaling}&lt;/b&gt;：按同一价格类型并排对比各方案，并查看吞吐量和效率如何随节点数变化。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Report&lt;/b&gt;: File ▸ Export Report… writes a PDF in English or Chinese with the inputs, the assumptions and where each price comes from; File ▸ Save keeps the scenario as a JSON file that the command line (gpu-planner report, estimate) reads too.</source>
        <translation>&lt;b&gt;报告&lt;/b&gt;：文件 ▸ 导出报告… 生成英文或中文 PDF，包含输入、假设和每项价格的来源；文件 ▸ 保存 把场景存为 JSON 文件，命令行（gpu-planner report、estimate）也能读取。</translation>
    </message>
    <message>
        <source>Size a GPU job in five steps:</source>
        <translation>五步估算一项 GPU 任务：</translation>
    </message>
    <message>
        <source>Go to {page}</source>
        <translation>转到{page}</translation>
    </message>
    <message>
        <source>Help ▸ Keyboard Shortcuts lists every shortcut; Help ▸ Open Example opens a ready-made scenario; {probe} measures your own GPUs and {specs} lists the GPUs, instances and prices.</source>
        <translation>帮助 ▸ 键盘快捷键 列出所有快捷键；帮助 ▸ 打开示例 打开现成的场景；{probe}页测量你自己的 GPU，{specs}页列出 GPU、实例和价格。</translation>
    </message>
    <message>
        <source>{key} opens this guide again.</source>
        <translation>按 {key} 可再次打开本指南。</translation>
    </message>
</context>
<context>
    <name>RowDialog</name>
    <message>
        <source>Your {kind} row</source>
        <translation>你的{kind}条目</translation>
    </message>
</context>
<context>
    <name>ScalingPage</name>
    <message>
        <source>weak scaling (global batch grows with the nodes)</source>
        <translation>弱扩展（全局批大小随节点数增加）</translation>
    </message>
    <message>
        <source>Node counts</source>
        <translation>节点数</translation>
    </message>
    <message>
        <source>Networks</source>
        <translation>网络</translation>
    </message>
    <message>
        <source>Network</source>
        <translation>网络</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点数</translation>
    </message>
    <message>
        <source>NICs per node</source>
        <translation>每节点网卡数</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>Fits</source>
        <translation>可容纳</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>token/秒</translation>
    </message>
    <message>
        <source>Efficiency</source>
        <translation>效率</translation>
    </message>
    <message>
        <source>No-overlap reference</source>
        <translation>无重叠参考</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>单步耗时</translation>
    </message>
    <message>
        <source>Node counts: whole numbers from 1 to 100000 separated by commas</source>
        <translation>节点数：1 到 100000 之间的整数，用逗号分隔</translation>
    </message>
    <message>
        <source>Tick at least one network</source>
        <translation>请至少勾选一种网络</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>NO</source>
        <translation>否</translation>
    </message>
    <message>
        <source>NICs per node: {n}</source>
        <translation>每节点网卡数：{n}</translation>
    </message>
    <message>
        <source>Each node: {g} GPUs. NICs per node: the plan&apos;s own network has the plan&apos;s (its instance&apos;s); another network has what nodes on it have:</source>
        <translation>每个节点：{g} 个 GPU。每节点网卡数：方案自身的网络取方案的网卡数（即其实例的）；其他网络取该网络上节点通常配备的网卡数：</translation>
    </message>
    <message>
        <source>{network}: {n}, {why}</source>
        <translation>{network}：{n}，{why}</translation>
    </message>
    <message>
        <source>Left out: {counts} node(s): the GPUs do not hold whole tp × pp × cp × ep groups of the plan</source>
        <translation>未列出：{counts} 个节点（其 GPU 数无法容纳完整的 tp × pp × cp × ep 组）</translation>
    </message>
    <message>
        <source>Rows marked NO under Fits do not fit in GPU memory at that count</source>
        <translation>“可容纳”列为“否”的行在该节点数下显存放不下</translation>
    </message>
</context>
<context>
    <name>SearchPage</name>
    <message>
        <source>on-demand</source>
        <translation>按需实例</translation>
    </message>
    <message>
        <source>1-year reserved</source>
        <translation>1 年预留</translation>
    </message>
    <message>
        <source>3-year reserved</source>
        <translation>3 年预留</translation>
    </message>
    <message>
        <source>spot</source>
        <translation>竞价实例</translation>
    </message>
    <message>
        <source>Machines to consider</source>
        <translation>候选机器</translation>
    </message>
    <message>
        <source>Deadline (days)</source>
        <translation>截止期限（天）</translation>
    </message>
    <message>
        <source>optional</source>
        <translation>可选</translation>
    </message>
    <message>
        <source>Budget (USD)</source>
        <translation>预算（美元）</translation>
    </message>
    <message>
        <source>fastest</source>
        <translation>最快</translation>
    </message>
    <message>
        <source>cheapest</source>
        <translation>最便宜</translation>
    </message>
    <message>
        <source>Every plan is priced at this one price; a machine without it has no cost</source>
        <translation>所有方案都按这一种价格计费；没有该价格的机器不计成本</translation>
    </message>
    <message>
        <source>At most GPUs</source>
        <translation>GPU 数量上限</translation>
    </message>
    <message>
        <source>Objective</source>
        <translation>优化目标</translation>
    </message>
    <message>
        <source>Plans to show</source>
        <translation>显示方案数</translation>
    </message>
    <message>
        <source>Price</source>
        <translation>价格</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Copy estimate command</source>
        <translation>复制 estimate 命令</translation>
    </message>
    <message>
        <source>Copy the gpu-planner estimate command that reproduces the selected plan</source>
        <translation>复制可复现所选方案的 gpu-planner estimate 命令</translation>
    </message>
    <message>
        <source>no price at {basis}</source>
        <translation>无{basis}价格</translation>
    </message>
    <message>
        <source>Machine</source>
        <translation>机器</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>Time to train</source>
        <translation>训练时间</translation>
    </message>
    <message>
        <source>The whole run in its natural unit (seconds, minutes, hours, days); sorts by time</source>
        <translation>整个任务的用时，以合适的单位显示（秒、分钟、小时、天）；按时间排序</translation>
    </message>
    <message>
        <source>Cost (USD, {basis})</source>
        <translation>成本（美元，{basis}）</translation>
    </message>
    <message>
        <source>¥→$: the instance&apos;s price is in CNY, converted to USD at {rate} CNY per USD (the scenario&apos;s rate, else the default)</source>
        <translation>¥→$：该实例以人民币计价，按 {rate} 人民币/美元换算为美元（场景中设定的汇率，否则为默认汇率）</translation>
    </message>
    <message>
        <source>tp×pp×cp×ep×dp</source>
        <translation>tp×pp×cp×ep×dp</translation>
    </message>
    <message>
        <source>Sequence parallel</source>
        <translation>序列并行</translation>
    </message>
    <message>
        <source>Pipeline schedule</source>
        <translation>流水线调度</translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>微批大小</translation>
    </message>
    <message>
        <source>Recomputation</source>
        <translation>激活重计算</translation>
    </message>
    <message>
        <source>Similar</source>
        <translation>相似方案</translation>
    </message>
    <message>
        <source>+{n} similar</source>
        <translation>+{n} 个相似</translation>
    </message>
    <message>
        <source>Plans on the same machine and GPU count within {pct:g}% of the row&apos;s time and cost, folded into it (the row shows the simplest); hover a cell for the list</source>
        <translation>同一机器、同一 GPU 数下，时间和成本与本行相差都在 {pct:g}% 以内的方案已并入本行（本行显示其中最简单的一个）；鼠标悬停于单元格可查看列表</translation>
    </message>
    <message>
        <source>{time} ({days:.4g} days)</source>
        <translation>{time}（{days:.4g} 天）</translation>
    </message>
    <message>
        <source>Slower and dearer than the row above of {machine} at {gpus:,} GPUs</source>
        <translation>比上方 {machine} 在 {gpus:,} 块 GPU 下的那一行更慢、更贵</translation>
    </message>
    <message>
        <source>Folded into this row (within {pct:g}% of its time and cost):</source>
        <translation>并入本行的方案（时间和成本相差在 {pct:g}% 以内）：</translation>
    </message>
    <message>
        <source>no price</source>
        <translation>无价格</translation>
    </message>
    <message>
        <source>interleaved</source>
        <translation>交错式</translation>
    </message>
    <message>
        <source>{schedule}, sequence parallel</source>
        <translation>{schedule}，序列并行</translation>
    </message>
    <message>
        <source>tp×pp×cp×ep×dp {layout}, {schedule}, ZeRO {zero}, micro-batch {mb}, recomputation {rec}: {time}, {cost}</source>
        <translation>tp×pp×cp×ep×dp {layout}，{schedule}，ZeRO {zero}，微批 {mb}，重计算 {rec}：{time}，{cost}</translation>
    </message>
    <message>
        <source>… and {n} more</source>
        <translation>……另有 {n} 个</translation>
    </message>
    <message>
        <source>Copied: {command}</source>
        <translation>已复制：{command}</translation>
    </message>
    <message>
        <source>Open in Plan</source>
        <translation>在方案页中打开</translation>
    </message>
    <message>
        <source>Tick at least one machine</source>
        <translation>请至少勾选一台机器</translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>搜索中…</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>interleaved, vp {vp}</source>
        <translation>交错，vp {vp}</translation>
    </message>
    <message>
        <source>{n:,} configurations scored in {s:.2f} s; {f:,} fit</source>
        <translation>{s:.2f} 秒内评估了 {n:,} 个配置；{f:,} 个可容纳</translation>
    </message>
</context>
<context>
    <name>ServePage</name>
    <message>
        <source>Time to first token</source>
        <translation>首 token 延迟</translation>
    </message>
    <message>
        <source>Mean time to first token in a benchmark run</source>
        <translation>基准测试中的平均首 token 延迟</translation>
    </message>
    <message>
        <source>Time per output token</source>
        <translation>每输出 token 耗时</translation>
    </message>
    <message>
        <source>End-to-end latency</source>
        <translation>端到端延迟</translation>
    </message>
    <message>
        <source>Output tokens/s</source>
        <translation>输出 tokens/s</translation>
    </message>
    <message>
        <source>Output tokens/s per GPU</source>
        <translation>每 GPU 输出 tokens/s</translation>
    </message>
    <message>
        <source>Tokens/s per user</source>
        <translation>每用户 tokens/s</translation>
    </message>
    <message>
        <source>Requests/s</source>
        <translation>请求数/秒</translation>
    </message>
    <message>
        <source>KV cache (tokens per replica)</source>
        <translation>KV 缓存（每副本 token 数）</translation>
    </message>
    <message>
        <source>Max concurrency</source>
        <translation>最大并发数</translation>
    </message>
    <message>
        <source>Cost per million output tokens</source>
        <translation>每百万输出 token 成本</translation>
    </message>
    <message>
        <source>weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>KV cache pool</source>
        <translation>KV 缓存池</translation>
    </message>
    <message>
        <source>activation workspace</source>
        <translation>激活工作区</translation>
    </message>
    <message>
        <source>CUDA graphs</source>
        <translation>CUDA Graphs</translation>
    </message>
    <message>
        <source>other</source>
        <translation>其他</translation>
    </message>
    <message>
        <source>GEMMs (attention, dense MLP, output layer)</source>
        <translation>GEMM（注意力、稠密 MLP、输出层）</translation>
    </message>
    <message>
        <source>expert GEMMs</source>
        <translation>专家 GEMM</translation>
    </message>
    <message>
        <source>attention (KV cache)</source>
        <translation>注意力（KV 缓存）</translation>
    </message>
    <message>
        <source>communication</source>
        <translation>通信</translation>
    </message>
    <message>
        <source>element-wise</source>
        <translation>逐元素运算</translation>
    </message>
    <message>
        <source>kernel launches</source>
        <translation>内核启动</translation>
    </message>
    <message>
        <source>engine CPU overhead</source>
        <translation>引擎 CPU 开销</translation>
    </message>
    <message>
        <source>waiting for the host (per-request CPU work)</source>
        <translation>等待主机（逐请求的 CPU 工作）</translation>
    </message>
    <message>
        <source>unbounded (queue grows)</source>
        <translation>无上限（队列持续增长）</translation>
    </message>
    <message>
        <source>{ttft} ({n:,} requests)</source>
        <translation>{ttft}（{n:,} 个请求）</translation>
    </message>
    <message>
        <source>none (open loop: a request rate)</source>
        <translation>无（开环：按请求速率）</translation>
    </message>
    <message>
        <source>no price (choose an instance)</source>
        <translation>无价格（请选择实例）</translation>
    </message>
    <message>
        <source>Fits on {gpus} GPUs, but saturated: at most {n:,} requests run at once, the rest queue</source>
        <translation>{gpus} 块 GPU 可容纳，但已饱和：最多同时运行 {n:,} 个请求，其余排队</translation>
    </message>
    <message>
        <source>Fits on {gpus} GPUs: {n:,} requests can run at once, no queueing</source>
        <translation>{gpus} 块 GPU 可容纳：可同时运行 {n:,} 个请求，无需排队</translation>
    </message>
    <message>
        <source>Billed: {n:,} instance(s) of {per} GPUs, {idle:,} GPUs idle</source>
        <translation>计费：{n:,} 台实例（每台 {per} 块 GPU），{idle:,} 块 GPU 闲置</translation>
    </message>
    <message>
        <source>Deployment</source>
        <translation>部署</translation>
    </message>
    <message>
        <source>GPU or instance</source>
        <translation>GPU 或实例</translation>
    </message>
    <message>
        <source>Traffic</source>
        <translation>流量</translation>
    </message>
    <message>
        <source>Concurrency (closed loop)</source>
        <translation>并发数（闭环）</translation>
    </message>
    <message>
        <source>Request rate (open loop)</source>
        <translation>请求速率（开环）</translation>
    </message>
    <message>
        <source>Load</source>
        <translation>负载</translation>
    </message>
    <message>
        <source>SLO search</source>
        <translation>SLO 搜索</translation>
    </message>
    <message>
        <source>Machines to consider</source>
        <translation>候选机器</translation>
    </message>
    <message>
        <source>Run SLO search</source>
        <translation>运行 SLO 搜索</translation>
    </message>
    <message>
        <source>Memory per GPU</source>
        <translation>每 GPU 显存</translation>
    </message>
    <message>
        <source>Use this deployment</source>
        <translation>使用此部署</translation>
    </message>
    <message>
        <source>Machine</source>
        <translation>机器</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>Instances</source>
        <translation>实例</translation>
    </message>
    <message>
        <source>Idle GPUs</source>
        <translation>闲置 GPU</translation>
    </message>
    <message>
        <source>tp×pp×ep×replicas</source>
        <translation>tp×pp×ep×副本</translation>
    </message>
    <message>
        <source>Weights / KV</source>
        <translation>权重 / KV</translation>
    </message>
    <message>
        <source>Saturated</source>
        <translation>已饱和</translation>
    </message>
    <message>
        <source>USD/h</source>
        <translation>USD/小时</translation>
    </message>
    <message>
        <source>USD per million output tokens</source>
        <translation>每百万输出 token 美元</translation>
    </message>
    <message>
        <source>Price basis</source>
        <translation>计价方式</translation>
    </message>
    <message>
        <source>custom model</source>
        <translation>自定义模型</translation>
    </message>
    <message>
        <source>Model: {name} (from the Workload page)</source>
        <translation>模型：{name}（来自“工作负载”页）</translation>
    </message>
    <message>
        <source>per GPU</source>
        <translation>每 GPU</translation>
    </message>
    <message>
        <source>per step</source>
        <translation>每步</translation>
    </message>
    <message>
        <source>Tick at least one machine</source>
        <translation>请至少勾选一台机器</translation>
    </message>
    <message>
        <source>{name}: give a target</source>
        <translation>{name}：请填写目标值</translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>搜索中…</translation>
    </message>
    <message>
        <source>{n:,} deployments scored in {s:.2f} s; {f:,} fit, {m:,} meet the targets</source>
        <translation>{s:.2f} 秒内评估 {n:,} 种部署；{f:,} 种可容纳，{m:,} 种满足目标</translation>
    </message>
    <message>
        <source>No deployment meets TTFT ≤ {ttft:g} ms and TPOT ≤ {tpot:g} ms</source>
        <translation>没有部署满足 TTFT ≤ {ttft:g} ms 且 TPOT ≤ {tpot:g} ms</translation>
    </message>
    <message>
        <source>Closest: {machine}, {gpus} GPUs, TTFT {ttft}, TPOT {tpot:,.1f} ms</source>
        <translation>最接近：{machine}，{gpus} 块 GPU，TTFT {ttft}，TPOT {tpot:,.1f} ms</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>follow the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>same as the interface</source>
        <translation>与界面相同</translation>
    </message>
    <message>
        <source>light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>Meeting-mode font scale</source>
        <translation>会议模式字体缩放</translation>
    </message>
    <message>
        <source>CNY per USD</source>
        <translation>人民币兑美元汇率</translation>
    </message>
    <message>
        <source>show memory in GiB (2^30 bytes) instead of GB (10^9)</source>
        <translation>显存以 GiB（2^30 字节）而非 GB（10^9）显示</translation>
    </message>
    <message>
        <source>Memory margin (%)</source>
        <translation>显存余量（%）</translation>
    </message>
    <message>
        <source>Free GPU memory a plan must keep beyond the estimate (allocator fragmentation, framework versions); below it a plan that fits is marked tight, and the search does not pick it</source>
        <translation>方案在估算之外必须保留的空闲显存（分配器碎片、框架版本差异）；低于该值的方案即使能容纳也标为余量不足，搜索不会选择它</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>Report language</source>
        <translation>报告语言</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <source>Currency of new scenarios</source>
        <translation>新场景的货币</translation>
    </message>
    <message>
        <source>Default framework</source>
        <translation>默认框架</translation>
    </message>
    <message>
        <source>Units</source>
        <translation>单位</translation>
    </message>
    <message>
        <source>Your data (database, autosave, logs)</source>
        <translation>你的数据（数据库、自动保存、日志）</translation>
    </message>
    <message>
        <source>Reset all settings</source>
        <translation>恢复所有默认设置</translation>
    </message>
    <message>
        <source>A new language applies the next time the app starts.</source>
        <translation>新语言将在下次启动应用时生效。</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Shortcut</source>
        <translation>快捷键</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Menu</source>
        <translation>菜单</translation>
    </message>
</context>
<context>
    <name>Specs</name>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Vendor</source>
        <translation>厂商</translation>
    </message>
    <message>
        <source>Memory (GiB, datasheet)</source>
        <translation>显存（GiB，规格表）</translation>
    </message>
    <message>
        <source>Memory, driver total (GB)</source>
        <translation>显存，驱动报告总量（GB）</translation>
    </message>
    <message>
        <source>Memory bandwidth (GB/s)</source>
        <translation>显存带宽 (GB/s)</translation>
    </message>
    <message>
        <source>BF16 dense (TFLOP/s)</source>
        <translation>BF16 稠密算力 (TFLOP/s)</translation>
    </message>
    <message>
        <source>FP8 dense (TFLOP/s)</source>
        <translation>FP8 稠密算力 (TFLOP/s)</translation>
    </message>
    <message>
        <source>FP32 (TFLOP/s)</source>
        <translation>FP32 算力 (TFLOP/s)</translation>
    </message>
    <message>
        <source>GPU link</source>
        <translation>GPU 互连</translation>
    </message>
    <message>
        <source>Link bandwidth (GB/s)</source>
        <translation>互连带宽 (GB/s)</translation>
    </message>
    <message>
        <source>TDP (W)</source>
        <translation>功耗 (TDP) (W)</translation>
    </message>
    <message>
        <source>Year</source>
        <translation>年份</translation>
    </message>
    <message>
        <source>Retrieved</source>
        <translation>获取日期</translation>
    </message>
    <message>
        <source>Origin</source>
        <translation>数据归属</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>云服务商</translation>
    </message>
    <message>
        <source>Region</source>
        <translation>区域</translation>
    </message>
    <message>
        <source>Instance</source>
        <translation>实例</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>vCPUs</source>
        <translation>vCPU 数</translation>
    </message>
    <message>
        <source>RAM (GB)</source>
        <translation>内存 (GB)</translation>
    </message>
    <message>
        <source>Network (Gbit/s)</source>
        <translation>网络 (Gbit/s)</translation>
    </message>
    <message>
        <source>On-demand price / h</source>
        <translation>按需价格 / 小时</translation>
    </message>
    <message>
        <source>1-yr reserved price / h</source>
        <translation>1 年预留价格 / 小时</translation>
    </message>
    <message>
        <source>3-yr reserved price / h</source>
        <translation>3 年预留价格 / 小时</translation>
    </message>
    <message>
        <source>Spot price / h</source>
        <translation>竞价实例价格 / 小时</translation>
    </message>
    <message>
        <source>Monthly subscription / month</source>
        <translation>包月价格 / 月</translation>
    </message>
    <message>
        <source>Currency</source>
        <translation>货币</translation>
    </message>
    <message>
        <source>Prices dated</source>
        <translation>价格日期</translation>
    </message>
    <message>
        <source>ID</source>
        <translation>ID</translation>
    </message>
    <message>
        <source>Scope</source>
        <translation>范围</translation>
    </message>
    <message>
        <source>Bandwidth (GB/s)</source>
        <translation>带宽 (GB/s)</translation>
    </message>
    <message>
        <source>Latency (µs)</source>
        <translation>延迟 (µs)</translation>
    </message>
    <message>
        <source>Efficiency</source>
        <translation>效率</translation>
    </message>
    <message>
        <source>The memory size as the datasheet gives it. A datasheet&apos;s &quot;80 GB&quot; is 80 GiB (80 × 2³⁰ bytes = 85.90 × 10⁹ bytes).</source>
        <translation>规格表给出的显存容量。规格表上的“80 GB”是 80 GiB（80 × 2³⁰ 字节 = 85.90 × 10⁹ 字节）。</translation>
    </message>
    <message>
        <source>The GPU&apos;s total memory as the driver reports it (NVML, nvidia-smi): {factor} × the datasheet&apos;s GiB, in GB of 10⁹ bytes (80 GiB: {example:.2f} GB). Plan and Compare check a plan&apos;s memory, CUDA context included, against this number.</source>
        <translation>驱动报告的 GPU 显存总量（NVML、nvidia-smi）：规格表 GiB 数 × {factor}，以 GB（10⁹ 字节）为单位（80 GiB：{example:.2f} GB）。“方案”和“对比”页用这个数检查方案的显存（含 CUDA 上下文）。</translation>
    </message>
    <message>
        <source>Price dated {date}, older than 1 year ({days} days old): check it before quoting it</source>
        <translation>价格日期为 {date}，已超过 1 年（{days} 天前）：引用前请核实</translation>
    </message>
    <message>
        <source>Per instance-hour, in the row&apos;s own currency (¥ CNY, $ USD)</source>
        <translation>每实例小时价格，按该行自身的币种（¥ 人民币，$ 美元）</translation>
    </message>
    <message>
        <source>Per instance-month of a monthly subscription, in the row&apos;s own currency; its date is in the row&apos;s details</source>
        <translation>包月订阅的每实例每月价格，以该行自身的币种计；其日期见该行详情</translation>
    </message>
</context>
<context>
    <name>SpecsPage</name>
    <message>
        <source>Filter: type any part of a name, provider, GPU…</source>
        <translation>筛选：输入名称、云服务商、GPU 等的任意部分…</translation>
    </message>
    <message>
        <source>Add your own…</source>
        <translation>添加自定义项…</translation>
    </message>
    <message>
        <source>Copy and edit…</source>
        <translation>复制并编辑…</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Cloud instances</source>
        <translation>云实例</translation>
    </message>
    <message>
        <source>Interconnects</source>
        <translation>互连网络</translation>
    </message>
    <message>
        <source>Prices are per instance-hour in each row&apos;s own currency: ¥ = CNY, $ = USD (estimates convert CNY at the rate in Settings).</source>
        <translation>价格为每实例小时价格，按各行自身的币种计：¥ = 人民币，$ = 美元（估算时按设置中的汇率将人民币换算为美元）。</translation>
    </message>
    <message>
        <source>⚠ {n} of {total} instance rows have prices older than 1 year (marked amber; their date is on the row): check them before quoting them.</source>
        <translation>⚠ {total} 个实例行中有 {n} 行的价格已超过 1 年（以琥珀色标出，日期见该行）：引用前请核实。</translation>
    </message>
    <message>
        <source>{shown} of {total} rows</source>
        <translation>显示 {shown} / {total} 行</translation>
    </message>
    <message>
        <source>&lt;p&gt;Select a row to see its details and sources: every value with its source and date.&lt;/p&gt;</source>
        <translation>&lt;p&gt;选择一行即可查看其详情和来源：每个数值及其来源和日期。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Date</source>
        <translation>日期</translation>
    </message>
    <message>
        <source>Origin</source>
        <translation>数据归属</translation>
    </message>
</context>
<context>
    <name>Table</name>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
</context>
<context>
    <name>Units</name>
    <message>
        <source>days</source>
        <translation>天</translation>
    </message>
    <message>
        <source>USD</source>
        <translation>美元</translation>
    </message>
    <message>
        <source>CNY</source>
        <translation>人民币</translation>
    </message>
    <message>
        <source>hours</source>
        <translation>小时</translation>
    </message>
    <message>
        <source>per user</source>
        <translation>每用户</translation>
    </message>
</context>
<context>
    <name>ValidationDialog</name>
    <message>
        <source>Validation</source>
        <translation>验证</translation>
    </message>
    <message>
        <source>How far the estimates are from real runs and published numbers: {n} groups of checks, {m} with a headline result below; every case, its inputs and its error are in the file.</source>
        <translation>估算与真实运行和公开数据相差多少：共 {n} 组检验，其中 {m} 组的总体结果列在下面；每个案例及其输入和误差见文件。</translation>
    </message>
    <message>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>Accuracy check</source>
        <translation>精度检验</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Open the file</source>
        <translation>打开文件</translation>
    </message>
    <message>
        <source>The validation report is docs/validation.md in the app&apos;s source repository (it is not installed with the app): every accuracy check of the engine against real runs and published numbers, with its inputs, the estimate and the error. Regenerate it with python benchmarks/make_validation.py.</source>
        <translation>验证报告是本应用源代码仓库中的 docs/validation.md（不随应用安装）：引擎与真实运行和公开数据的每一项精度检验，包括输入、估算值和误差。可用 python benchmarks/make_validation.py 重新生成。</translation>
    </message>
</context>
<context>
    <name>WorkloadPage</name>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Import config.json…</source>
        <translation>导入 config.json…</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Hidden size</source>
        <translation>隐藏层维度</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层数</translation>
    </message>
    <message>
        <source>Attention heads</source>
        <translation>注意力头数</translation>
    </message>
    <message>
        <source>Key/value heads</source>
        <translation>KV 头数</translation>
    </message>
    <message>
        <source>Feed-forward size</source>
        <translation>前馈层维度</translation>
    </message>
    <message>
        <source>Vocabulary</source>
        <translation>词表</translation>
    </message>
    <message>
        <source>Setup</source>
        <translation>训练设置</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Inference</source>
        <translation>推理</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>Report</source>
        <translation>报告</translation>
    </message>
    <message>
        <source>shown with the inputs on the report&apos;s first page</source>
        <translation>与输入一起显示在报告第一页</translation>
    </message>
    <message>
        <source>Title</source>
        <translation>标题</translation>
    </message>
    <message>
        <source>Project</source>
        <translation>项目</translation>
    </message>
    <message>
        <source>Author</source>
        <translation>作者</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>备注</translation>
    </message>
    <message>
        <source>PEFT&apos;s default for the model</source>
        <translation>PEFT 对该模型的默认值</translation>
    </message>
    <message>
        <source>Target tokens/s</source>
        <translation>目标 token/秒</translation>
    </message>
    <message>
        <source>optional</source>
        <translation>可选</translation>
    </message>
    <message>
        <source>attention heads must be a multiple of key/value heads</source>
        <translation>注意力头数必须是 KV 头数的整数倍</translation>
    </message>
    <message>
        <source>hidden size must be a multiple of attention heads</source>
        <translation>隐藏层维度必须是注意力头数的整数倍</translation>
    </message>
    <message>
        <source>cannot import {path}: {err}</source>
        <translation>无法导入 {path}：{err}</translation>
    </message>
    <message>
        <source>Import a Hugging Face config.json</source>
        <translation>导入 Hugging Face config.json</translation>
    </message>
    <message>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
</context>
<context>
    <name>win</name>
    <message>
        <source>Restore unsaved work?</source>
        <translation>恢复未保存的工作？</translation>
    </message>
    <message>
        <source>The last session ended without saving. Restore its scenario?</source>
        <translation>上次会话未保存就结束了。是否恢复其场景？</translation>
    </message>
    <message>
        <source>Welcome: an example scenario is open. Edit the Workload and Plan pages, or File ▸ Open Example for more.</source>
        <translation>欢迎：已打开一个示例场景。可编辑“工作负载”和“方案”页，或通过“文件 ▸ 打开示例”查看更多示例。</translation>
    </message>
</context>
</TS>
