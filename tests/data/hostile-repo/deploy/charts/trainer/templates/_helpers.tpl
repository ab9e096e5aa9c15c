{{- define "trainer.name" -}}trainer{{- end -}}
