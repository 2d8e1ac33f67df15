module github.com/cloudwego/hertz

go 1.19

require (
	github.com/bytedance/gopkg v0.1.3
	github.com/bytedance/sonic v1.15.0
	github.com/cloudwego/netpoll v0.7.2
	github.com/fsnotify/fsnotify v1.5.4
	github.com/stretchr/testify v1.10.0
	github.com/tidwall/gjson v1.14.4
	golang.org/x/sync v0.8.0
	golang.org/x/sys v0.24.0
	google.golang.org/protobuf v1.34.1
)

require (
	github.com/bytedance/sonic/loader v0.5.0 // indirect
	github.com/cloudwego/base64x v0.1.6 // indirect
	github.com/cloudwego/gopkg v0.1.4 // indirect
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	github.com/klauspost/cpuid/v2 v2.2.9 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/stretchr/objx v0.5.2 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.0 // indirect
	github.com/twitchyliquid64/golang-asm v0.15.1 // indirect
	golang.org/x/arch v0.0.0-20210923205945-b76863e36670 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
