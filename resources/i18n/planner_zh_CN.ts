<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name></name>
    <message>
        <source>whole number from {lo} to {hi}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>; {lo} means {special}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name}: a number greater than {lo}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name}: a number from {lo} to {hi}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (or empty)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, e.g. 1e12 or 2,500</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AddInstancesDialog</name>
    <message>
        <source>Add machines to compare</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Compare</name>
    <message>
        <source>GPU / instance</source>
        <translation type="unfinished"></translation>
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
        <source>GPU memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>Fits</source>
        <translation>可容纳</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>单步耗时</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <source>MFU</source>
        <translation>算力利用率 (MFU)</translation>
    </message>
    <message>
        <source>Time to train</source>
        <translation>训练时长</translation>
    </message>
    <message>
        <source>GPU-hours</source>
        <translation>GPU 时</translation>
    </message>
    <message>
        <source>Cost on-demand</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost reserved 1 yr</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost spot</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost per million tokens</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ComparePage</name>
    <message>
        <source>Add machines…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Metric</source>
        <translation type="unfinished"></translation>
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
        <source>{n} plans; bold = best among the plans that fit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time to train (days)</source>
        <translation>训练时长 (days)</translation>
    </message>
    <message>
        <source>Step time (s)</source>
        <translation>单步耗时 (s)</translation>
    </message>
    <message>
        <source>Cost on-demand (USD)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Decode tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>USD per million tokens</source>
        <translation type="unfinished"></translation>
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
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>sequence parallel</source>
        <translation>序列并行</translation>
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
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>GPUs per node</source>
        <translation>每节点 GPU 数</translation>
    </message>
    <message>
        <source>Tensor parallel</source>
        <translation>张量并行</translation>
    </message>
    <message>
        <source>Pipeline parallel</source>
        <translation>流水线并行</translation>
    </message>
    <message>
        <source>Context parallel</source>
        <translation>上下文并行</translation>
    </message>
    <message>
        <source>Expert parallel</source>
        <translation>专家并行</translation>
    </message>
    <message>
        <source>ZeRO stage</source>
        <translation>ZeRO 阶段</translation>
    </message>
    <message>
        <source>Pipeline schedule</source>
        <translation>流水线调度</translation>
    </message>
    <message>
        <source>Network</source>
        <translation>网络</translation>
    </message>
    <message>
        <source>NICs per node</source>
        <translation>每节点网卡数</translation>
    </message>
    <message>
        <source>Data parallel</source>
        <translation>数据并行</translation>
    </message>
    <message>
        <source>Memory per GPU</source>
        <translation>每 GPU 显存</translation>
    </message>
    <message>
        <source>Largest micro-batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>单步耗时</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <source>MFU</source>
        <translation>算力利用率 (MFU)</translation>
    </message>
    <message>
        <source>Time to train</source>
        <translation>训练时长</translation>
    </message>
    <message>
        <source>GPU-hours</source>
        <translation>GPU 时</translation>
    </message>
    <message>
        <source>Cost</source>
        <translation>成本</translation>
    </message>
    <message>
        <source>Assumptions</source>
        <translation>假设条件</translation>
    </message>
    <message>
        <source>Plan {n}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (copy)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU or instance: choose one from the list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No result: fix the input marked below</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>FITS: {used} of {cap} per GPU ({head} free)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>DOES NOT FIT: needs {used} per GPU, the GPU has {cap}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{d:.1f} days</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>set Tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prefill {t}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{v:,.1f} per user</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no price</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Per-token decode time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>per GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Advice: </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>on-demand</source>
        <translation>按需实例</translation>
    </message>
    <message>
        <source>1-yr</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>spot</source>
        <translation>竞价实例</translation>
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
        <translation type="unfinished"></translation>
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
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>CPU (numpy)</source>
        <translation type="unfinished"></translation>
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
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size</source>
        <translation type="unfinished"></translation>
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
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>profile name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save results as profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use selected profile in this scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validate: train the workload model for a few steps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>simulated devices (test)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>{n} GPU(s) via NVML</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Utilization (no NVIDIA GPU: telemetry off)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Probe failed: {err}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{dev} with {backend}: best GEMM {t:,.1f} TFLOP/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profiles calibrate GPU estimates: run on a GPU from the spec database</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>user database unavailable: {err}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profile name: type a name first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved profile {name}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a profile first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation runs preset models; choose a preset on the Workload page</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation: peak memory {p}, step time {s} against the estimate</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ScalingPage</name>
    <message>
        <source>weak scaling (global batch grows with the nodes)</source>
        <translation>弱扩展 (global batch grows with the nodes)</translation>
    </message>
    <message>
        <source>Node counts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Networks</source>
        <translation type="unfinished"></translation>
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
        <source>GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <source>Efficiency</source>
        <translation>效率</translation>
    </message>
    <message>
        <source>No-overlap reference</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>单步耗时</translation>
    </message>
    <message>
        <source>Node counts: whole numbers from 1 to 100000 separated by commas</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tick at least one network</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SearchPage</name>
    <message>
        <source>Machines to consider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deadline (days)</source>
        <translation>截止期限（天）</translation>
    </message>
    <message>
        <source>optional</source>
        <translation type="unfinished"></translation>
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
        <source>At most GPUs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Objective</source>
        <translation>优化目标</translation>
    </message>
    <message>
        <source>Plans to show</source>
        <translation type="unfinished"></translation>
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
        <source>Machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>tp×pp×cp×ep×dp</source>
        <translation type="unfinished"></translation>
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
        <source>Days</source>
        <translation>天</translation>
    </message>
    <message>
        <source>Cost</source>
        <translation>成本</translation>
    </message>
    <message>
        <source>Open in Plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tick at least one machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>{n:,} configurations scored in {s:.2f} s; {f:,} fit</source>
        <translation type="unfinished"></translation>
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
        <translation type="unfinished"></translation>
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
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Feed-forward size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vocabulary</source>
        <translation>词表</translation>
    </message>
    <message>
        <source>Setup</source>
        <translation type="unfinished"></translation>
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
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>Token 数</translation>
    </message>
    <message>
        <source>e.g. 1e12 (optional)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>微批大小</translation>
    </message>
    <message>
        <source>Sequence length</source>
        <translation>序列长度</translation>
    </message>
    <message>
        <source>Global batch</source>
        <translation>全局批大小</translation>
    </message>
    <message>
        <source>Recipe</source>
        <translation>精度方案</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>注意力实现</translation>
    </message>
    <message>
        <source>Recomputation</source>
        <translation>激活重计算</translation>
    </message>
    <message>
        <source>Framework</source>
        <translation>框架</translation>
    </message>
    <message>
        <source>Offload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>Target tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>optional</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Concurrent sequences</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt length</source>
        <translation>提示词长度</translation>
    </message>
    <message>
        <source>New tokens</source>
        <translation>生成 token 数</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>attention heads must be a multiple of key/value heads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>hidden size must be a multiple of attention heads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot import {path}: {err}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import a Hugging Face config.json</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
</context>
</TS>
