# The Java kit's build, sourced by bots/build.sh (which defines say, die, inputs_hash, need_protoc and CACHE).
# Run it as: bash bots/build.sh java, or bash bots/build.sh DIR for a bot folder made from this kit (arena new-bot).
# Maven generates the protocol classes from proto/ (protoc and protoc-gen-grpc-java come from Maven Central at the
# versions in bots/java/pom.xml) and packs one runnable jar, bin/bot.jar; then a warm-up run of the bot records the
# classes it loads in bin/bot.jsa, a class-data archive that the launcher bots/java/bot maps at every start.
# Every .proto file: the Maven plugin compiles the whole of proto/ (dial_in.proto and the control API too), so a
# change to any of them is a change to the build's input.
mapfile -t JAVA_PROTOS < <(cd proto && find dominoes -name '*.proto' | LC_ALL=C sort)
# The same memory flags as the launcher bots/java/bot, so the archive fits the JVM that maps it.
JAVA_ARCHIVE_FLAGS=(-Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ActiveProcessorCount=1)

build_java() {
  local dir=${1:-bots/java} java_bin=${JAVA:-java}
  # The JDK: javac beside Maven's java ($JAVA_HOME, else the PATH), and the java the launcher runs.
  command -v mvn >/dev/null 2>&1 ||
    die java "mvn not found: install Maven 3.8 or later and a JDK 17 or later (apt-get install maven openjdk-17-jdk-headless)"
  command -v "${JAVA_HOME:+$JAVA_HOME/bin/}javac" >/dev/null 2>&1 ||
    die java "javac not found${JAVA_HOME:+ in \$JAVA_HOME=$JAVA_HOME}: install a JDK 17 or later (apt-get install openjdk-17-jdk-headless)"
  local java_version
  java_version=$("$java_bin" -version 2>&1 | sed -n 1p) ||
    die java "$java_bin not found: install a JDK 17 or later (apt-get install openjdk-17-jdk-headless) or set JAVA=/path/to/java"
  [[ $java_version =~ version\ \"([0-9]+) ]] && ((BASH_REMATCH[1] >= 17)) ||
    die java "Java 17 or later needed, $java_bin is: $java_version (set JAVA=/path/to/java and JAVA_HOME)"

  local mvn_version stamp=$dir/bin/.build-hash want
  # The first line of `mvn -v` ("Apache Maven 3.8.7"), without the colour codes this Maven prints anyway.
  mvn_version=$(mvn -v 2>&1 | sed -n '1s/\x1b\[[0-9;]*m//gp')
  want=$(inputs_hash "$dir" "${JAVA_PROTOS[@]/#/proto/}" proto/examples/*.act.json; "$java_bin" -version 2>&1
         echo "$mvn_version")
  if [ -f $dir/bin/bot.jar ] && [ -f $dir/bin/bot.jsa ] && [ "$(cat $stamp 2>/dev/null)" = "$want" ]; then
    say java "$dir/bin/bot.jar is up to date"
    return
  fi

  # Jars already built from exactly these inputs, by this or another clone (CI), keyed by the inputs' hash.
  local jars=$CACHE/java/jars key
  key=$(echo "$want" | sha256sum | cut -c1-32)
  mkdir -p $dir/bin "$jars"
  rm -f $dir/bin/bot.jar $dir/bin/bot.jsa $stamp
  if [ -f "$jars/$key.jar" ]; then
    say java "reusing the jar built from the same inputs ($jars/$key.jar)"
    cp "$jars/$key.jar" $dir/bin/bot.jar
  else
    # Maven's repository (plugins, protoc, the libraries) lives outside the clone; its output goes to gen/.
    # -XX:TieredStopAtLevel=1 runs Maven itself twice as fast; the sed drops its colour codes.
    say java "building $dir/bin/bot.jar with $mvn_version and $java_version"
    rm -rf $dir/gen
    (cd $dir && MAVEN_OPTS="${MAVEN_OPTS:+$MAVEN_OPTS }-XX:TieredStopAtLevel=1 -XX:+UseSerialGC" \
      mvn -B -q --no-transfer-progress -Dmaven.repo.local="$CACHE/java/m2" package) 2>&1 |
      sed 's/\x1b\[[0-9;]*m//g' || die java "the Maven build failed (see above)"
    cp $dir/gen/java-bot-1.0.0.jar "$jars/$key.jar.tmp" && mv "$jars/$key.jar.tmp" "$jars/$key.jar"
    cp "$jars/$key.jar" $dir/bin/bot.jar
    # Keep the five newest jars.
    ls -t "$jars"/*.jar | tail -n +6 | xargs -r rm -f
  fi

  # The warm-up (WarmUp.java): every policy on the example request of every variant (proto/examples), then the bot
  # on a temporary socket, called with them through a real gRPC client; the JVM writes every class it loaded to
  # bin/bot.jsa at exit. The archive names the jar by its absolute path (as the launcher does, with symbolic links
  # resolved) and its time stamp, so each clone makes its own. A failure here is a bug in the bot.
  say java "trying the bot on proto/examples and recording the classes it loads in $dir/bin/bot.jsa"
  local abs
  abs=$(cd $dir && pwd -P)
  timeout 120 "$java_bin" "${JAVA_ARCHIVE_FLAGS[@]}" -XX:ArchiveClassesAtExit="$abs/bin/bot.jsa" -Xlog:cds=error \
    -cp "$abs/bin/bot.jar" dominoes.bot.WarmUp proto/examples ||
    die java "the bot failed its warm-up on proto/examples (see above)"
  [ -f $dir/bin/bot.jsa ] || die java "the warm-up run wrote no $dir/bin/bot.jsa"
  echo "$want" > $stamp
  say java "built $dir/bin/bot.jar ($(du -h $dir/bin/bot.jar | cut -f1)) and $dir/bin/bot.jsa ($(du -h $dir/bin/bot.jsa | cut -f1)); run bots/java/bot"
}
