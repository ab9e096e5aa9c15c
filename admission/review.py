"""AdmissionReview `admission.k8s.io/v1`, parsed and answered with pydantic at the boundary.

Only what a validating webhook reads is modelled; unknown fields are ignored so newer API servers
keep working. Field names follow the API (camelCase) through aliases.

A request that the API server would never send for its operation is malformed and denied
(:meth:`AdmissionRequest.malformed`): a CREATE or UPDATE carries the object it creates or updates,
so one whose ``object`` is null, missing or not a JSON object would otherwise be allowed with
nothing judged. A DELETE legitimately has a null ``object`` (its ``oldObject`` is what is deleted).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ModelWrapValidatorHandler, PrivateAttr, model_validator

from stockade.policies.model import json_type_name

API_VERSION = "admission.k8s.io/v1"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class GroupVersionKind(_Model):
    group: str = ""
    version: str = ""
    kind: str


class GroupVersionResource(_Model):
    group: str = ""
    version: str = ""
    resource: str


class UserInfo(_Model):
    username: str = ""
    uid: str = ""
    groups: list[str] = Field(default_factory=list)
    extra: dict[str, list[str]] = Field(default_factory=dict)


class AdmissionRequest(_Model):
    uid: str = Field(min_length=1)
    kind: GroupVersionKind
    resource: GroupVersionResource
    sub_resource: str = Field("", alias="subResource")
    name: str = ""
    namespace: str = ""
    operation: Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]
    user_info: UserInfo = Field(default_factory=UserInfo, alias="userInfo")
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = Field(None, alias="oldObject")
    dry_run: bool = Field(False, alias="dryRun")
    #: `object` or `oldObject` fields that held something other than a JSON object or null
    _not_objects: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _objects_or_null(
        cls, data: Any, handler: ModelWrapValidatorHandler[AdmissionRequest]
    ) -> AdmissionRequest:
        """Set aside an `object` or `oldObject` that is not a JSON object (a list, a string): the
        request is still parsed, with its uid, so that it can be denied as malformed instead of
        failing as a bad request (which `failurePolicy: Ignore` would allow)."""
        bad: list[str] = []
        if isinstance(data, dict):
            for key in ("object", "oldObject"):
                value = data.get(key)
                if value is not None and not isinstance(value, dict):
                    bad.append(f"request.{key} is {json_type_name(value)}, not an object")
            if bad:
                data = {
                    k: (None if k in ("object", "oldObject") and not isinstance(v, dict) else v)
                    for k, v in data.items()
                }
        request = handler(data)
        request._not_objects = tuple(bad)
        return request

    def malformed(self) -> str | None:
        """Why this request is not one the API server sends for its operation, or None: a CREATE or
        UPDATE without its object, or an `object`/`oldObject` that is not a JSON object."""
        if self._not_objects:
            return "; ".join(self._not_objects)
        if self.operation in ("CREATE", "UPDATE") and self.object is None:
            article = "an" if self.operation == "UPDATE" else "a"
            return (
                f"{article} {self.operation} request without its object (request.object is null or missing)"
            )
        return None


class AdmissionReview(_Model):
    api_version: Literal["admission.k8s.io/v1"] = Field(alias="apiVersion")
    kind: Literal["AdmissionReview"]
    request: AdmissionRequest


class Status(_Model):
    code: int
    message: str
    reason: str = ""


class AdmissionResponse(_Model):
    uid: str
    allowed: bool
    status: Status | None = None
    warnings: list[str] | None = None
    audit_annotations: dict[str, str] | None = Field(None, alias="auditAnnotations")


class AdmissionReviewResponse(_Model):
    api_version: str = Field(API_VERSION, alias="apiVersion")
    kind: str = "AdmissionReview"
    response: AdmissionResponse

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)
