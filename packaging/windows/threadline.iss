; Inno Setup 6 script: a per-user Threadline installer (no administrator rights needed).
;
; Built by `python packaging/build.py windows`, which passes the defines below; by hand:
;   iscc /DAppVersion=0.1.0 /DSourceDir=build\dist\threadline /DOutputDir=build\out ^
;        /DIconFile=build\icons\threadline.ico packaging\windows\threadline.iss
;
; Installs the PyInstaller one-folder build into %LOCALAPPDATA%\Programs\Threadline, adds a
; Start menu entry (and optionally a desktop icon), registers an uninstaller in
; "Apps & features". Conversations live in %LOCALAPPDATA%\Threadline and are kept on
; uninstall (they are the user's data).

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#ifndef SourceDir
  #define SourceDir "..\..\build\dist\threadline"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\build\out"
#endif
#ifndef IconFile
  #define IconFile "..\..\build\icons\threadline.ico"
#endif
#define AppName "Threadline"
#define AppExe "threadline.exe"

[Setup]
; A stable AppId: upgrades replace the previous version instead of installing beside it.
AppId={{6F0C2B7E-4B1D-4C59-9E3A-2D7A1C0B5E42}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=Threadline developers
AppPublisherURL=https://github.com/threadline/threadline
AppSupportURL=https://github.com/threadline/threadline/issues
AppCopyright=Copyright (c) Threadline developers. MIT License.
VersionInfoVersion={#AppVersion}
; Per-user install without elevation: {autopf} is %LOCALAPPDATA%\Programs, {autoprograms}
; the user's Start menu.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=commandline dialog
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0.17763
OutputDir={#OutputDir}
OutputBaseFilename=threadline-{#AppVersion}-windows-setup
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
Compression=lzma2/ultra64
SolidCompression=yes
LZMANumBlockThreads=4
WizardStyle=modern
CloseApplications=yes
RestartApplications=no
ChangesEnvironment=no

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[InstallDelete]
; An upgrade must not keep modules of the previous build next to the new ones.
Type: filesandordirs; Name: "{app}\_internal"

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; WorkingDir: "{app}"; Comment: "Chat with language models"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; WorkingDir: "{app}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Only what the installer put there; the user's conversations in %LOCALAPPDATA%\Threadline stay.
Type: filesandordirs; Name: "{app}\_internal"
