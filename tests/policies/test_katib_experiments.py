"""A Katib Experiment judged as the pods of the trials it runs (kubeflow/katib
pkg/apis/controller/experiments/v1beta1: the trial controller creates ``trialTemplate.trialSpec``, a
Job or a training job, with `${trialParameters.x}` filled in, for every trial).

kubeflow/manifests' tests/katib_test.yaml passed a scan with nothing said; a later note named it
among the kinds not modelled. Its trials' Job is judged now, at the lines of its trialSpec."""

from __future__ import annotations

from typing import Any

import yaml

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS, KATIB_PARAMETERS
from stockade.policies.model import Resource
from stockade.scanner.scan import ScanOptions, scan

EXPERIMENT = """\
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata:
  name: grid
  namespace: kubeflow-user-example-com
spec:
  objective: {type: maximize, goal: 0.99, objectiveMetricName: loss}
  algorithm: {algorithmName: grid}
  trialTemplate:
    primaryContainerName: training-container
    trialParameters:
    - {name: learningRate, reference: lr}
    - {name: image, reference: image}
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        template:
          spec:
            hostNetwork: true
            containers:
            - name: training-container
              image: "${trialParameters.image}"
              command: [python3, /opt/mnist.py, "--lr=${trialParameters.learningRate}"]
            restartPolicy: Never
"""


def _experiment() -> dict[str, Any]:
    obj = yaml.safe_load(EXPERIMENT)
    assert isinstance(obj, dict)
    return obj


def test_the_trials_job_is_the_experiments_pod() -> None:
    (pod,) = DEFAULT_WORKLOADS.pods(_experiment())
    assert pod["template"] == "Job"
    assert pod["specPath"] == ["spec", "trialTemplate", "trialSpec", "spec", "template", "spec"]
    assert pod["parameters"] == KATIB_PARAMETERS
    info = DEFAULT_WORKLOADS.info(_experiment())
    assert info is not None and not info.runs_pods  # a template: its trials' Jobs run the pods


def test_findings_point_into_the_trial_spec() -> None:
    evaluator = Evaluator.default(parse_config("{}"))
    result = scan([Resource(_experiment())], evaluator, ScanOptions(evaluator.config), version="t")
    assert result.errors == []
    by_rule = {f.rule.id: f for f in result.findings}
    assert by_rule["STK-POD-002"].path == (
        "spec",
        "trialTemplate",
        "trialSpec",
        "spec",
        "template",
        "spec",
        "hostNetwork",
    )
    # the image is a trial parameter: decided for each trial, not refused by the kubelet
    assert by_rule["STK-IMG-005"].message == (
        'container "training-container" image "${trialParameters.image}": a Katib trial parameter, set '
        "for each trial: the image rules did not check it"
    )
