"""Preemption shared by the preempting PostFilter plugins (upstream's
``pkg/scheduler/framework/preemption``): the evaluator, the dry run over candidate nodes, the
victims on one node, and the preempting extenders."""
