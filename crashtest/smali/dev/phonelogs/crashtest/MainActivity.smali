# Crash Test's only activity in Dalvik assembly, for machines without the Android SDK: build.sh
# assembles it with Debian's smali straight to classes.dex. It is the same class as
# src/dev/phonelogs/crashtest/MainActivity.java (the SDK build); keep the two in step (check.sh
# compares the resource names both look up). Every text the app logs or throws comes from
# res/values/strings.xml by name, the one source of truth for the app's behaviour.
.class public Ldev/phonelogs/crashtest/MainActivity;
.super Landroid/app/Activity;
.source "MainActivity.java"


.method public constructor <init>()V
    .registers 1

    invoke-direct {p0}, Landroid/app/Activity;-><init>()V
    return-void
.end method


# onCreate: shows res/layout/main.xml and logs the start line.
.method protected onCreate(Landroid/os/Bundle;)V
    .registers 6

    invoke-super {p0, p1}, Landroid/app/Activity;->onCreate(Landroid/os/Bundle;)V

    invoke-virtual {p0}, Ldev/phonelogs/crashtest/MainActivity;->getResources()Landroid/content/res/Resources;
    move-result-object v0
    invoke-virtual {p0}, Ldev/phonelogs/crashtest/MainActivity;->getPackageName()Ljava/lang/String;
    move-result-object v1
    const-string v2, "main"
    const-string v3, "layout"
    invoke-virtual {v0, v2, v3, v1}, Landroid/content/res/Resources;->getIdentifier(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)I
    move-result v0
    invoke-virtual {p0, v0}, Ldev/phonelogs/crashtest/MainActivity;->setContentView(I)V

    const-string v0, "log_tag"
    invoke-direct {p0, v0}, Ldev/phonelogs/crashtest/MainActivity;->text(Ljava/lang/String;)Ljava/lang/String;
    move-result-object v0
    const-string v1, "start_line"
    invoke-direct {p0, v1}, Ldev/phonelogs/crashtest/MainActivity;->text(Ljava/lang/String;)Ljava/lang/String;
    move-result-object v1
    invoke-static {v0, v1}, Landroid/util/Log;->i(Ljava/lang/String;Ljava/lang/String;)I
    return-void
.end method


# The Crash button (android:onClick="crash"): an uncaught exception on the main thread.
.method public crash(Landroid/view/View;)V
    .registers 4

    new-instance v0, Ljava/lang/IllegalStateException;
    const-string v1, "crash_message"
    invoke-direct {p0, v1}, Ldev/phonelogs/crashtest/MainActivity;->text(Ljava/lang/String;)Ljava/lang/String;
    move-result-object v1
    invoke-direct {v0, v1}, Ljava/lang/IllegalStateException;-><init>(Ljava/lang/String;)V
    throw v0
.end method


# The Hang button (android:onClick="hang"): logs, then the main thread never returns (an ANR).
.method public hang(Landroid/view/View;)V
    .registers 4

    const-string v0, "log_tag"
    invoke-direct {p0, v0}, Ldev/phonelogs/crashtest/MainActivity;->text(Ljava/lang/String;)Ljava/lang/String;
    move-result-object v0
    const-string v1, "hang_line"
    invoke-direct {p0, v1}, Ldev/phonelogs/crashtest/MainActivity;->text(Ljava/lang/String;)Ljava/lang/String;
    move-result-object v1
    invoke-static {v0, v1}, Landroid/util/Log;->i(Ljava/lang/String;Ljava/lang/String;)I

    const-wide/32 v0, 60000

    :forever
    invoke-static {v0, v1}, Landroid/os/SystemClock;->sleep(J)V
    goto :forever
.end method


# text(name): the string resource of that name, looked up at run time as the Java class does.
.method private text(Ljava/lang/String;)Ljava/lang/String;
    .registers 5

    invoke-virtual {p0}, Ldev/phonelogs/crashtest/MainActivity;->getResources()Landroid/content/res/Resources;
    move-result-object v0
    invoke-virtual {p0}, Ldev/phonelogs/crashtest/MainActivity;->getPackageName()Ljava/lang/String;
    move-result-object v1
    const-string v2, "string"
    invoke-virtual {v0, p1, v2, v1}, Landroid/content/res/Resources;->getIdentifier(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)I
    move-result v0
    invoke-virtual {p0, v0}, Ldev/phonelogs/crashtest/MainActivity;->getString(I)Ljava/lang/String;
    move-result-object v0
    return-object v0
.end method
