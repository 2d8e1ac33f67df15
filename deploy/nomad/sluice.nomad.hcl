# sluice as a Nomad service job: one gateway per node in front of the vLLM
# allocations, which sluice discovers from Nomad's native service discovery.
# See docs/operations.md ("Running under Nomad").
job "sluice" {
  type        = "service"
  datacenters = ["dc1"]

  group "gateway" {
    # One allocation per node (or set a count and drop the constraint).
    count = 3
    constraint {
      operator = "distinct_hosts"
      value    = "true"
    }

    network {
      port "http" {
        static = 8080
      }
      # HTTPS: sluice terminates TLS itself (the certificate below).
      port "https" {
        static = 8443
      }
      # The admin listener binds to the allocation's address on this port
      # (NOMAD_IP_admin), never all interfaces, and /metrics and /status
      # need the bearer token (admin_token_env below).
      port "admin" {}
    }

    # Registers every replica: fleet.nomad_service divides key limits by
    # the number of live instances, so the replicas together admit what
    # one gateway would.
    service {
      name     = "sluice"
      provider = "nomad"
      port     = "http"
      # /readyz needs no token: the check sends none.
      check {
        name     = "ready"
        type     = "http"
        port     = "admin"
        path     = "/readyz"
        interval = "5s"
        timeout  = "2s"
      }
    }

    # The admin listener, for Prometheus (nomad_sd_configs, keep service
    # sluice-admin; it scrapes /metrics with the token: docs/operations.md, "Admin
    # listener").
    service {
      name     = "sluice-admin"
      provider = "nomad"
      port     = "admin"
      tags     = ["metrics"]
    }

    # Rolling upgrades, one replica at a time, only once the new one is
    # ready (/readyz: every worker listens).
    update {
      max_parallel     = 1
      health_check     = "checks"
      min_healthy_time = "10s"
      healthy_deadline = "5m"
      auto_revert      = true
    }

    task "sluice" {
      driver = "exec"

      config {
        command = "local/sluice"
        args    = ["serve", "-c", "local/sluice.yaml"]
      }

      artifact {
        source = "https://example.com/sluice/sluice-linux-amd64" # your build of `make build`
        options {
          filename = "sluice"
        }
      }

      # Streams last minutes: Nomad's default 5 s would cut every one of
      # them on each deploy. SIGTERM makes the workers stop accepting and
      # drain for shutdown_timeout (keep kill_timeout above it + 5 s).
      kill_signal  = "SIGTERM"
      kill_timeout = "10m"

      # Workload identity: NOMAD_TOKEN in the environment, for the Task
      # API socket sluice queries services through (nomad.address below).
      identity {
        env = true
      }

      # Secrets from Nomad variables, as environment variables: the
      # backends' key, and the admin listener's bearer token (a long random
      # string, e.g. openssl rand -hex 32; Prometheus holds the same one).
      template {
        destination = "secrets/env"
        env         = true
        data        = <<-EOT
          {{ with nomadVar "nomad/jobs/sluice" }}
          VLLM_API_KEY={{ .vllm_api_key }}
          SLUICE_ADMIN_TOKEN={{ .admin_token }}
          {{ end }}
        EOT
      }

      # The TLS certificate chain and its key in one PEM file (sluice reads
      # each from the same file), from a Nomad variable: one file, so a
      # renewal is one change and one reload. SIGHUP re-reads it: new
      # handshakes use the new certificate, open connections finish on the
      # old one, and a bad one is refused with the old one still serving.
      template {
        destination   = "secrets/tls/gateway.pem"
        perms         = "0600"
        change_mode   = "signal"
        change_signal = "SIGHUP"
        data          = <<-EOT
          {{ with nomadVar "nomad/jobs/sluice/tls" }}{{ .certificate }}
          {{ .private_key }}{{ end }}
        EOT
      }

      # The configuration, rendered from Nomad variables. A change is
      # applied by SIGHUP — a reload: routes swap in place, counters and
      # open streams carry on, nothing restarts.
      template {
        destination   = "local/sluice.yaml"
        change_mode   = "signal"
        change_signal = "SIGHUP"
        data          = <<-EOT
          listen:
            - address: 0.0.0.0:{{ env "NOMAD_PORT_http" }}
            - address: 0.0.0.0:{{ env "NOMAD_PORT_https" }}
              tls:
                certificates:
                  - cert: {{ env "NOMAD_SECRETS_DIR" }}/tls/gateway.pem
                    key: {{ env "NOMAD_SECRETS_DIR" }}/tls/gateway.pem
          admin: {{ env "NOMAD_IP_admin" }}:{{ env "NOMAD_PORT_admin" }}
          admin_token_env: SLUICE_ADMIN_TOKEN
          workers: auto            # one per reserved core (NOMAD_CPU_CORES sets the affinity mask)
          pin_cpus: true
          shutdown_timeout: 9m
          usage_log: stdout
          pid_file: {{ env "NOMAD_TASK_DIR" }}/sluice.pid
          nomad:
            address: unix://{{ env "NOMAD_SECRETS_DIR" }}/api.sock
          fleet:
            nomad_service: sluice
          keys:
          {{- with nomadVar "nomad/jobs/sluice/keys" }}{{ range $name, $sha := . }}
            - name: {{ $name }}
              sha256: {{ $sha }}
              models: ["*"]
              requests_per_minute: 600
          {{- end }}{{ end }}
          models:
            - name: llama-3.1-8b
              upstream_model: meta-llama/Llama-3.1-8B-Instruct
              nomad:
                service: vllm-llama
                slots: 16
                api_key_env: VLLM_API_KEY
              queue: {max: 1000, timeout: 30s}
        EOT
      }

      resources {
        cores  = 4 # reserved cores: the workers pin to them
        memory = 1024
      }
    }
  }
}
